//go:build !race

#include "textflag.h"

// func StoreRelease(p *atomic.Uint32, v uint32)
//
// A plain MOV: x86-TSO never reorders a store with earlier loads or
// stores, so it is a release store; being a call, it also keeps the
// compiler from moving the caller's memory accesses across it.
TEXT ·StoreRelease(SB), NOSPLIT, $0-12
	MOVQ p+0(FP), AX
	MOVL v+8(FP), BX
	MOVL BX, (AX)
	RET

//go:build !race

#include "textflag.h"

// func StoreRelease(p *atomic.Uint32, v uint32)
//
// STLR: a store-release, ordered after every earlier load and store.
TEXT ·StoreRelease(SB), NOSPLIT, $0-12
	MOVD  p+0(FP), R0
	MOVWU v+8(FP), R1
	STLRW R1, (R0)
	RET

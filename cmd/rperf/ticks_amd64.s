#include "textflag.h"

// func ticks() int64
//
// RDTSC, as perftest's get_cycles on x86-64: no fence, the same work as
// the C side's timestamps.
TEXT ·ticks(SB), NOSPLIT|NOFRAME, $0-8
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET

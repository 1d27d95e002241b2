#include "textflag.h"

// func ticks() int64
//
// The virtual counter after an ISB, as perftest's get_cycles on aarch64.
TEXT ·ticks(SB), NOSPLIT|NOFRAME, $0-8
	ISB  $15
	MRS  CNTVCT_EL0, R0
	MOVD R0, ret+0(FP)
	RET

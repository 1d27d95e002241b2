#include "textflag.h"

// DSB ST: every earlier store, to normal memory and to device memory,
// completes before any later store. A DMB would order them only as other
// observers in the inner shareable domain see them, which does not cover
// a device reading memory by DMA after our doorbell write.
TEXT ·ToDevice(SB), NOSPLIT|NOFRAME, $0-0
	DSB $14
	RET

// DSB LD: every earlier load completes before any later load or store,
// so the CQE's body is read after the load that saw its owner bit.
TEXT ·FromDevice(SB), NOSPLIT|NOFRAME, $0-0
	DSB $13
	RET

// DSB ST: the stores to the WC (Normal-NC or Device-GRE) page complete
// before any later store, which also keeps them from merging with the
// next burst.
TEXT ·FlushWrites(SB), NOSPLIT|NOFRAME, $0-0
	DSB $14
	RET

// A load-acquire/store-release pair took the lock; it does not order
// stores to device memory, so the WC stores need their own barrier.
TEXT ·LockedWCStart(SB), NOSPLIT|NOFRAME, $0-0
	DSB $14
	RET

// func store64(p *byte, v uint64)
TEXT ·store64(SB), NOSPLIT, $0-16
	MOVD p+0(FP), R0
	MOVD v+8(FP), R1
	MOVD R1, (R0)
	RET

// func FencedStore64(p *[8]byte, v uint64)
//
// DSB ST, the store, DSB ST: FlushWrites around store64.
TEXT ·FencedStore64(SB), NOSPLIT, $0-16
	MOVD p+0(FP), R0
	MOVD v+8(FP), R1
	DSB $14
	MOVD R1, (R0)
	DSB $14
	RET

// func burst64(dst, src *byte)
//
// One 64-byte load into four vector registers and one 64-byte store, as
// rdma-core's arm64 mmio_memcpy_x64 does with vld4q_u64 and vst4q_u64:
// the store goes out as a single burst. LD4 and ST4 deinterleave and
// interleave again, so the bytes land in their original order.
TEXT ·burst64(SB), NOSPLIT, $0-16
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	VLD4 (R1), [V0.D2, V1.D2, V2.D2, V3.D2]
	VST4 [V0.D2, V1.D2, V2.D2, V3.D2], (R0)
	RET

// func copyBlocks(dst, src *byte, blocks int)
//
// burst64 over blocks blocks (at least 1), the pointers moved on by the
// post-indexed LD4 and ST4: a BlueFlame write of a whole WQE.
TEXT ·copyBlocks(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD blocks+16(FP), R2
loop:
	VLD4.P 64(R1), [V0.D2, V1.D2, V2.D2, V3.D2]
	VST4.P [V0.D2, V1.D2, V2.D2, V3.D2], 64(R0)
	SUBS $1, R2, R2
	BNE loop
	RET

#include "textflag.h"

// x86-TSO keeps stores to write-back memory in order and a device's DMA
// reads see them in that order, so the barrier towards the device is only
// a compiler barrier, which the call is.
TEXT ·ToDevice(SB), NOSPLIT|NOFRAME, $0-0
	RET

// LFENCE: later loads do not pass it. rdma-core uses it after the owner
// bit check; on write-back memory TSO already keeps loads in order.
TEXT ·FromDevice(SB), NOSPLIT|NOFRAME, $0-0
	LFENCE
	RET

// SFENCE: drains the write-combining buffers and orders the WC stores
// before it against every later store.
TEXT ·FlushWrites(SB), NOSPLIT|NOFRAME, $0-0
	SFENCE
	RET

// The LOCK-prefixed instruction that took the lock is a full barrier for
// all memory types: nothing more to do.
TEXT ·LockedWCStart(SB), NOSPLIT|NOFRAME, $0-0
	RET

// func store64(p *byte, v uint64)
TEXT ·store64(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ v+8(FP), BX
	MOVQ BX, (AX)
	RET

// func burst64(dst, src *byte)
//
// Eight 64-bit stores in ascending order, as rdma-core's x86 mmio_memcpy_x64
// does: the WC buffer combines them into one 64-byte PCIe write.
TEXT ·burst64(SB), NOSPLIT, $0-16
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ 0(SI), AX
	MOVQ AX, 0(DI)
	MOVQ 8(SI), AX
	MOVQ AX, 8(DI)
	MOVQ 16(SI), AX
	MOVQ AX, 16(DI)
	MOVQ 24(SI), AX
	MOVQ AX, 24(DI)
	MOVQ 32(SI), AX
	MOVQ AX, 32(DI)
	MOVQ 40(SI), AX
	MOVQ AX, 40(DI)
	MOVQ 48(SI), AX
	MOVQ AX, 48(DI)
	MOVQ 56(SI), AX
	MOVQ AX, 56(DI)
	RET

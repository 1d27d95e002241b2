#include "textflag.h"

// x86-TSO does not reorder loads with loads, and CQEs are in write-back
// memory, coherent with the device's DMA: as for ToDevice, the barrier
// after the owner bit is only a compiler barrier, which the call is. The
// kernel's dma_rmb() is the same on x86 (arch/x86/include/asm/barrier.h);
// rdma-core's udma_from_device_barrier is an LFENCE, ~8 ns per CQE for
// nothing the memory model needs (docs/memory-ordering.md).
TEXT ·FromDevice(SB), NOSPLIT|NOFRAME, $0-0
	RET

// SFENCE: drains the write-combining buffers and orders the WC stores
// before it against every later store.
TEXT ·FlushWrites(SB), NOSPLIT|NOFRAME, $0-0
	SFENCE
	RET

// func store64(p *byte, v uint64)
TEXT ·store64(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ v+8(FP), BX
	MOVQ BX, (AX)
	RET

// func FencedStore64(p *[8]byte, v uint64)
//
// SFENCE, the store, SFENCE: FlushWrites around store64.
TEXT ·FencedStore64(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ v+8(FP), BX
	SFENCE
	MOVQ BX, (AX)
	SFENCE
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

// func copyBlocks(dst, src *byte, blocks int)
//
// burst64 over blocks blocks (at least 1), one loop in one call: a
// BlueFlame write of a whole WQE.
TEXT ·copyBlocks(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), CX
loop:
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
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ loop
	RET

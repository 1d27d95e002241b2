// Package mmio is what a hardware driver needs beyond Go's memory model to
// hand work to a device: the barriers that order its stores to queue
// memory against the device's DMA reads, the barriers around
// write-combining (WC) device pages, and single 64-bit and 64-byte stores
// to device registers. They are the counterparts of rdma-core's
// util/udma_barrier.h and util/mmio.h, in Go assembly for amd64 and arm64
// (Go has no primitive for any of them); other architectures get a pure Go
// fallback built on sync/atomic, which is stronger where it is defined at
// all and exists so that the module builds and vets everywhere.
//
// docs/memory-ordering.md says, for each function, which instruction it
// is on each architecture and why.
//
// A call to any of the assembly functions is also a compiler barrier: the
// Go compiler does not move loads or stores of memory it cannot prove
// private across it. The barriers that are only compiler barriers on
// amd64 (ToDevice, LockedWCStart, FromDeviceAtomic) are inlined Go there,
// which order what they promise through the compiler's memory chain.
package mmio

import "unsafe"

// Write64 stores the 8 bytes of v, in memory order as v would have them in
// a native store, at b[off:off+8] with one 64-bit store: the doorbell
// write to a UAR (rdma-core's mmio_write64_be, which takes the value
// already in big-endian byte order). off must be 8-byte aligned.
func Write64(b []byte, off int, v uint64) {
	_ = b[off+7]
	if off%8 != 0 {
		panic("mmio: misaligned 64-bit store")
	}
	write64(b, off, v)
}

// Write64To is Write64 to the register at p, which the caller checked
// once to be 8-byte aligned (a UAR register at a fixed offset of its
// page): the per-call checks of off make Write64 too costly to inline,
// and a doorbell rung on every CQ arm would pay for the call.
func Write64To(p *[8]byte, v uint64) {
	write64(p[:], 0, v)
}

// Copy64 copies the 64 bytes src[srcOff:srcOff+64] to dst[dstOff:dstOff+64]
// as one burst of stores in ascending address order, the way BlueFlame
// wants a WQE block written to its WC page (rdma-core's mmio_memcpy_x64 of
// 64 bytes). Both offsets must be 8-byte aligned.
func Copy64(dst []byte, dstOff int, src []byte, srcOff int) {
	_ = dst[dstOff+63]
	_ = src[srcOff+63]
	if dstOff%8 != 0 || srcOff%8 != 0 {
		panic("mmio: misaligned 64-byte copy")
	}
	copy64(dst, dstOff, src, srcOff)
}

// Store64 is Write64 without its checks, for a caller that checked the
// register once where it mapped it: one 64-bit store of v, in v's native
// memory order, at p, which must be 8-byte aligned.
func Store64(p unsafe.Pointer, v uint64) { store64((*byte)(p), v) }

// CopyBlocks is Copy64 of blocks consecutive 64-byte blocks, without
// checks, in one call: the BlueFlame write of a whole WQE (rdma-core's
// mlx5_bf_copy loop of mmio_memcpy_x64). dst and src must be 8-byte
// aligned with blocks*64 bytes behind them, and blocks at least 1; the
// caller checked the register where it mapped it, and splits a WQE that
// wraps at the end of its queue.
func CopyBlocks(dst, src unsafe.Pointer, blocks int) { copyBlocks((*byte)(dst), (*byte)(src), blocks) }

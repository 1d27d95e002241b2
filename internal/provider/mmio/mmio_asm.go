//go:build amd64 || arm64

package mmio

// FromDevice orders the loads that follow it after the load that saw the
// device's ownership mark (a CQE's owner bit): rdma-core's
// udma_from_device_barrier.
func FromDevice()

// FlushWrites orders the stores to a WC page before everything after it
// and pushes them out of the CPU's write-combining buffer: rdma-core's
// mmio_flush_writes. Before a WC write it keeps earlier memory and MMIO
// stores ahead of it (rdma-core's mmio_wc_start, the same instruction).
func FlushWrites()

// store64 is one 64-bit store of v at p.
//
//go:noescape
func store64(p *byte, v uint64)

// FencedStore64 is FlushWrites, Write64To(p, v), FlushWrites in one call:
// the doorbell a CQ arm rings, whose record must reach memory before it
// and which must leave the CPU at once (mlx5_arm_cq). Three calls cost
// more than the rest of an arm.
//
//go:noescape
func FencedStore64(p *[8]byte, v uint64)

// burst64 copies 64 bytes from src to dst, in ascending order, with as few
// stores as the architecture allows.
//
//go:noescape
func burst64(dst, src *byte)

// copyBlocks is burst64 of blocks consecutive blocks (at least 1).
//
//go:noescape
func copyBlocks(dst, src *byte, blocks int)

func write64(b []byte, off int, v uint64) { store64(&b[off], v) }

func copy64(dst []byte, dstOff int, src []byte, srcOff int) { burst64(&dst[dstOff], &src[srcOff]) }

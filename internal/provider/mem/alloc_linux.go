//go:build !purerdma_stub

package mem

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Alloc returns size bytes of zeroed, page-aligned anonymous memory outside
// the Go heap, for queues a device reads and writes by DMA (mlx5 keeps its
// queues and doorbell records in user memory and hands their addresses to
// the kernel, which pins them). The mapping is rounded up to whole pages;
// the returned slice has length size and the mapping's capacity.
//
// The pages are marked MADV_DONTFORK, as rdma-core's ibv_dontfork_range
// does for the buffers of its providers: a child of fork must not get a
// copy-on-write view of pages the device may still write, which would
// leave the parent's copy stale. Free returns the memory; the garbage
// collector never does.
func Alloc(size int) ([]byte, error) {
	if size <= 0 {
		return nil, fmt.Errorf("mem: allocate %d bytes: %w", size, unix.EINVAL)
	}
	ps := os.Getpagesize()
	n := (size + ps - 1) &^ (ps - 1)
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mem: map %d bytes: %w", n, err)
	}
	if err := unix.Madvise(b, unix.MADV_DONTFORK); err != nil {
		unix.Munmap(b)
		return nil, fmt.Errorf("mem: madvise DONTFORK: %w", err)
	}
	return b[:size], nil
}

// Free unmaps memory from Alloc. b must be the slice Alloc returned (its
// capacity names the mapping). Free of nil does nothing.
func Free(b []byte) error {
	if b == nil {
		return nil
	}
	if cap(b) == 0 {
		return errors.New("mem: free of an empty slice")
	}
	return unix.Munmap(b[:cap(b)])
}

//go:build !purerdma_stub

package verbs

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Mmap maps a queue the kernel offers at offset of the command file.
func (c *Context) Mmap(offset uint64, size int) ([]byte, error) {
	b, err := unix.Mmap(c.FD.Int(), int64(offset), size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes at %#x: %w", size, offset, err)
	}
	return b, nil
}

// Munmap unmaps a queue.
func (c *Context) Munmap(b []byte) error { return unix.Munmap(b) }

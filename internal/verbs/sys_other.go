//go:build !linux || purerdma_stub

package verbs

import "github.com/purerdma/purerdma/internal/unsupported"

// Mmap maps a queue the kernel offers at offset of the command file
// (context_linux.go); without the Linux kernel it fails.
func (c *Context) Mmap(offset uint64, size int) ([]byte, error) {
	return nil, unsupported.Error("mmap")
}

// Munmap unmaps a queue; without the Linux kernel there is none.
func (c *Context) Munmap(b []byte) error { return unsupported.Error("munmap") }

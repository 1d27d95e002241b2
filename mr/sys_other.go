//go:build !linux || purerdma_stub

package mr

import "github.com/purerdma/purerdma/internal/unsupported"

// Alloc returns size bytes of memory mapped outside the Go heap
// (sys_linux.go); without the Linux kernel it fails.
func Alloc(size int) ([]byte, error) { return nil, unsupported.Error("allocate memory") }

// munmap is not reached: Free finds no memory from Alloc to unmap.
func munmap(b []byte) error { return unsupported.Error("unmap memory") }

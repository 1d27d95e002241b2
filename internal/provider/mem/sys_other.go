//go:build !linux || purerdma_stub

package mem

import "github.com/purerdma/purerdma/internal/unsupported"

// Alloc returns size bytes of memory outside the Go heap (alloc_linux.go);
// without the Linux kernel it fails.
func Alloc(size int) ([]byte, error) { return nil, unsupported.Error("allocate queue memory") }

// Free unmaps memory from Alloc, which has none to give here: it fails
// but for nil.
func Free(b []byte) error {
	if b == nil {
		return nil
	}
	return unsupported.Error("free queue memory")
}

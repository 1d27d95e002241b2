//go:build !linux || purerdma_stub

package conformance

import "github.com/purerdma/purerdma/internal/unsupported"

func mmapAnon(size int) ([]byte, error) { return nil, unsupported.Error("mmap") }

func munmap(b []byte) error { return unsupported.Error("munmap") }

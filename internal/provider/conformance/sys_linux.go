//go:build !purerdma_stub

package conformance

import "golang.org/x/sys/unix"

// The fake mlx5 device's page mappings; sys_other.go stubs them.

func mmapAnon(size int) ([]byte, error) {
	return unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
}

func munmap(b []byte) error { return unix.Munmap(b) }

//go:build !linux || purerdma_stub

package testenv

// KernelRelease is the running kernel's release (kernel_linux.go): none
// without Linux.
func KernelRelease() string { return "" }

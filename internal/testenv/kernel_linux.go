//go:build !purerdma_stub

package testenv

import "golang.org/x/sys/unix"

// KernelRelease is the running kernel's release (uname -r), e.g.
// "6.12.117+deb12-amd64".
func KernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

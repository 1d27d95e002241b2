package testenv

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// KernelRelease returns the running kernel's release (uname -r), or
// "unknown".
func KernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// NeedKernelFeature skips t when the device lacks a feature its kernel
// driver gained in a later release: have says whether the device reports
// it, feature names it ("RDMA FLUSH"), since is the first Linux release
// whose driver has it ("6.2"). This is the one reason a device test may
// skip on a kernel that lacks something; the message names what a run
// on a newer kernel would cover.
func NeedKernelFeature(t testing.TB, d Dev, have bool, feature, since string) {
	t.Helper()
	if !have {
		t.Skipf("%s on Linux %s has no %s: it came in %s", d.Driver, KernelRelease(), feature, since)
	}
}

// KernelAtLeast reports whether the running kernel's release is at least
// major.minor. Tests use it to know which driver features to expect
// independently of what the device reports, which is what the code under
// test reads.
func KernelAtLeast(t testing.TB, major, minor int) bool {
	t.Helper()
	rel := KernelRelease()
	var ma, mi int
	if _, err := fmt.Sscanf(rel, "%d.%d", &ma, &mi); err != nil {
		t.Fatalf("kernel release %q: %v", rel, err)
	}
	return ma > major || ma == major && mi >= minor
}

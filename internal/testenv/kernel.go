package testenv

import (
	"strconv"
	"strings"
	"testing"
)

// KernelAtLeast reports whether the running kernel is major.minor or
// newer. Tests use it only where a kernel's behaviour, not a capability the
// device reports, differs between the kernels the VM boots (see
// docs/kernel-notes.md); features are asked of the device.
func KernelAtLeast(major, minor int) bool {
	m, n, ok := parseRelease(KernelRelease())
	return ok && (m > major || m == major && n >= minor)
}

// parseRelease reads the major and minor numbers of a kernel release.
func parseRelease(r string) (major, minor int, ok bool) {
	f := strings.FieldsFunc(r, func(c rune) bool { return c < '0' || c > '9' })
	if len(f) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(f[0])
	minor, err2 := strconv.Atoi(f[1])
	return major, minor, err1 == nil && err2 == nil
}

// NeedKernelFeature skips t when the device lacks a feature its kernel
// driver gained in a later release: have says whether the device reports
// it, feature names it ("RDMA FLUSH"), since is the first Linux release
// whose driver has it ("6.2"). This is the one reason a device test may
// skip on a kernel that lacks something; the message names what a run on
// a newer kernel would cover.
func NeedKernelFeature(t testing.TB, d Dev, have bool, feature, since string) {
	t.Helper()
	if !have {
		t.Skipf("%s on Linux %s has no %s: it came in %s", d.Driver, KernelRelease(), feature, since)
	}
}

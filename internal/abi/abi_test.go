package abi

// The layout and constant tests of this package (ib_user_verbs_test.go,
// ib_user_ioctl_verbs_types_test.go, rdma_user_ioctl_cmds_test.go,
// ib_user_ioctl_cmds_test.go, rdma_user_rxe_test.go, siw_abi_test.go,
// rdma_user_cm_test.go, ib_user_sa_test.go) compare
// the Go definitions with numbers that came from the C compiler, never from
// arithmetic by hand:
//
//   - The uapi headers were taken from Debian's linux-source-6.1 (6.1.192),
//     include/uapi/rdma/; they are identical to rdma-core v43.0's
//     kernel-headers/rdma/. The values of the kernel-internal enums of
//     include/rdma/ib_verbs.h were compiled from that header's enum blocks,
//     copied verbatim.
//   - A C program including them printed sizeof and offsetof of every field
//     of every struct mirrored in those files, and the value of every
//     constant; built with gcc 12.2 for x86_64, its output is the tables.
//   - The same program, built with aarch64-linux-gnu-gcc 12.2 and run under
//     qemu-aarch64, printed the same tables. That is expected: the headers
//     use only fixed-width types, their 64-bit members are __aligned_u64
//     (8-byte aligned on every architecture), and both architectures are LP64
//     with natural alignment.
//   - On the Go side, gc lays out these structs the same way on amd64 and
//     arm64 (go/types' SizesFor("gc", arch) gives identical sizes and
//     offsets for every type here), and the tests also pass as a
//     GOARCH=arm64 test binary under qemu-aarch64.
//
// So the tests, run on either architecture, check the one layout. No C code
// is kept in the repository; to re-check, repeat the steps above.

import (
	"testing"
)

// offset is a field of a layout: the C member (as offsetof names it), the
// Go offset and the C offset.
type offset struct {
	c         string
	got, want uintptr
}

// layout is a struct of the ABI: its C name, Go size, C size and fields.
type layout struct {
	c         string
	got, want uintptr
	fields    []offset
}

func checkLayouts(t *testing.T, layouts []layout) {
	t.Helper()
	for _, l := range layouts {
		if l.got != l.want {
			t.Errorf("sizeof(%s): Go %d, C %d", l.c, l.got, l.want)
		}
		for _, f := range l.fields {
			if f.got != f.want {
				t.Errorf("offsetof(%s, %s): Go %d, C %d", l.c, f.c, f.got, f.want)
			}
		}
	}
}

// constant is a constant of the ABI: its C name, Go value and C value.
type constant struct {
	name      string
	got, want uint64
}

func checkConstants(t *testing.T, constants []constant) {
	t.Helper()
	for _, c := range constants {
		if c.got != c.want {
			t.Errorf("%s: Go %#x, C %#x", c.name, c.got, c.want)
		}
	}
}

// checkUnion checks that union members of the given sizes fit a union of
// size n (a byte array in Go), and that the largest is n bytes, as C sizes a
// union.
func checkUnion(t *testing.T, name string, n uintptr, members ...uintptr) {
	t.Helper()
	largest := uintptr(0)
	for i, m := range members {
		if m > n {
			t.Errorf("%s: member %d has %d bytes, more than the union's %d", name, i, m, n)
		}
		largest = max(largest, m)
	}
	if largest != n {
		t.Errorf("%s: largest member has %d bytes, the union %d", name, largest, n)
	}
}

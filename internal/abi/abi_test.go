package abi

// The layout and constant tests of this package compare the Go mirror with
// numbers that came from the C compiler, never from arithmetic by hand. They
// are generated: zlayout_test.go (sizeof, offsetof, _Alignof) and
// zconst_test.go (constants) are written by hack/abigen (go generate), which
// compiles a probe of every row of hack/abigen/abi.spec against a kernel's
// uapi headers, plus the few kernel-internal enums of include/rdma/ib_verbs.h,
// rdma_cm.h, ib_cm.h and struct cma_hdr of drivers/infiniband/core/cma.c,
// copied out of the same kernel tree at run time. The tables hold the
// newest kernel the project tests (Linux 6.12); make abi-check checks them
// against the headers of each of KERNELS (rows an older kernel lacks are
// listed, not failed). docs/architecture.md has the details.
//
// The numbers are gcc's for x86_64; they hold for arm64 too: the headers use
// only fixed-width types, their 64-bit members are __aligned_u64 (8-byte
// aligned everywhere), and both are LP64 with natural alignment, so the C
// layout is the same: make abi-check compiles the probe with
// aarch64-linux-gnu-gcc too when it is installed, and gets the same tables. gc lays out these structs the same way on amd64 and
// arm64 (go/types' SizesFor("gc", arch) agrees for every type here), and
// the tests also pass as a GOARCH=arm64 binary under qemu-aarch64.
//
// The hand-written tests beside them check what is not a C number: that the
// byte arrays standing for C unions fit their members, and Go-side
// derivations.

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

// align is the alignment of a struct of the ABI: its C name, Go alignment
// and C alignment (_Alignof). It matters where a struct is embedded, and
// for the sockaddr storage, which C aligns to 8.
type align struct {
	c         string
	got, want uintptr
}

func checkAligns(t *testing.T, aligns []align) {
	t.Helper()
	for _, a := range aligns {
		if a.got != a.want {
			t.Errorf("_Alignof(%s): Go %d, C %d", a.c, a.got, a.want)
		}
	}
}

// str is a string constant of the ABI: its C name, Go value and C value.
type str struct {
	name      string
	got, want string
}

func checkStrings(t *testing.T, strs []str) {
	t.Helper()
	for _, s := range strs {
		if s.got != s.want {
			t.Errorf("%s: Go %q, C %q", s.name, s.got, s.want)
		}
	}
}

package mr_test

import (
	"syscall"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// TestNilReceivers calls every method of MR on a nil pointer: each returns
// ErrClosed, none panics.
func TestNilReceivers(t *testing.T) {
	n := testenv.CallMethods(t, (*mr.MR)(nil), uverbs.ErrClosed)
	t.Logf("%d methods called on nil", n)
}

// TestBadInputHost passes bad sizes, foreign memory and a nil PD, which
// are refused before any system call or by mmap; Alloc and Free keep
// working after each.
func TestBadInputHost(t *testing.T) {
	page, err := mr.Alloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Fails if a refused Register kept the memory counted as registered.
		if err := mr.Free(page); err != nil {
			t.Error(err)
		}
	})
	goMem := make([]byte, 4096)
	alloc := func(n int) func() error {
		return func() error {
			_, err := mr.Alloc(n)
			return err
		}
	}
	register := func(pd *uverbs.PD, b []byte, access uverbs.Access) func() error {
		return func() error {
			_, err := mr.Register(pd, b, access)
			return err
		}
	}
	usable := func() error {
		b, err := mr.Alloc(1)
		if err != nil {
			return err
		}
		return mr.Free(b)
	}
	n := testenv.RunBad(t, usable, []testenv.BadCase{
		testenv.Bad("Alloc: 0 bytes", uverbs.ErrInvalid, alloc(0)),
		testenv.Bad("Alloc: negative size", uverbs.ErrInvalid, alloc(-1)),
		testenv.Bad("Alloc: past the address space", syscall.ENOMEM, alloc(1<<62)),
		testenv.Bad("Free: nil", mr.ErrNotMapped, func() error { return mr.Free(nil) }),
		testenv.Bad("Free: Go memory", mr.ErrNotMapped, func() error { return mr.Free(goMem) }),
		testenv.Bad("Free: a sub-slice", mr.ErrNotMapped, func() error { return mr.Free(page[1:]) }),
		testenv.Bad("Forget: nil", mr.ErrNotMapped, func() error { return mr.Forget(nil) }),
		testenv.Bad("Forget: Go memory", mr.ErrNotMapped, func() error { return mr.Forget(goMem) }),
		testenv.Bad("Register: nil buffer", uverbs.ErrInvalid, register(nil, nil, uverbs.LocalWrite)),
		testenv.Bad("Register: Go memory", mr.ErrNotMapped, register(nil, goMem, uverbs.LocalWrite)),
		testenv.Bad("Register: nil PD", uverbs.ErrInvalid, register(nil, page, uverbs.LocalWrite)),
		testenv.Bad("Register: remote write without local write", uverbs.ErrInvalid, register(nil, page, uverbs.RemoteWrite)),
		testenv.Bad("Register: remote atomic without local write", uverbs.ErrInvalid, register(nil, page, uverbs.RemoteAtomic)),
	})
	t.Logf("%d bad inputs tried", n)
}

package verbs

import (
	"errors"
	"fmt"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/provider"
)

// TestPublic: each provider error and kernel errno gains the public
// sentinel of its kind, keeps its text word for word and still matches
// what it matched before; anything else passes through untouched.
func TestPublic(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want error
	}{
		{provider.ErrFull, ErrQueueFull},
		{fmt.Errorf("siw: send request with 3 SGEs, the QP takes 2: %w", provider.ErrInvalid), ErrInvalid},
		{fmt.Errorf("rxe: receive request of 9 bytes: %w", provider.ErrInvalid), ErrInvalid},
		{fmt.Errorf("siw: send opcode 9: %w", provider.ErrUnsupported), ErrUnsupported},
		{fmt.Errorf("rxe: %w", provider.ErrClosed), ErrClosed},
		{fmt.Errorf("CREATE_QP: %w", unix.EINVAL), ErrInvalid},
		{fmt.Errorf("DEALLOC_PD: %w", unix.EBUSY), ErrBusy},
		{fmt.Errorf("RESIZE_CQ: %w", unix.EOPNOTSUPP), ErrUnsupported},
		{fmt.Errorf("ioctl object 2 method 2: %w", unix.EPROTONOSUPPORT), ErrUnsupported},
	} {
		got := Public(tt.err)
		if !errors.Is(got, tt.want) || !errors.Is(got, tt.err) {
			t.Errorf("Public(%v) = %v, want it to match %v and the original", tt.err, got, tt.want)
		}
		if got.Error() != tt.err.Error() {
			t.Errorf("Public(%q) reads %q: the text must not change", tt.err, got)
		}
		if again := Public(got); again != got {
			t.Errorf("Public of its own result wrapped again: %v", again)
		}
	}
	for _, err := range []error{nil, ErrInvalid, fmt.Errorf("x: %w", ErrNoProvider), fmt.Errorf("mmap: %w", unix.ENOMEM), errors.New("other")} {
		if got := Public(err); got != err {
			t.Errorf("Public(%v) = %v, want it unchanged", err, got)
		}
	}
}

// TestPublicNilAllocs: the data path calls Public only on failure, but a
// nil must cost nothing anyway.
func TestPublicNilAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = Public(nil) }); n != 0 {
		t.Errorf("Public(nil) allocates %v times", n)
	}
}

type public struct{ Link[*Context] }

// TestLink: the accessor returns the core a public object was made with,
// and nil for a nil object instead of panicking.
func TestLink(t *testing.T) {
	c := &Context{Name: "x"}
	if got := ContextOf(&public{NewLink(c)}); got != c {
		t.Errorf("ContextOf = %p, want %p", got, c)
	}
	if got := ContextOf((*public)(nil)); got != nil {
		t.Errorf("ContextOf(nil) = %p, want nil", got)
	}
}

package cq_test

import (
	"fmt"
	"testing"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/uverbs"
)

// TestNilReceivers calls every method of CQ and Channel on a nil pointer:
// each returns ErrClosed, none panics.
func TestNilReceivers(t *testing.T) {
	n := 0
	for _, p := range []any{(*cq.CQ)(nil), (*cq.Channel)(nil)} {
		n += testenv.CallMethods(t, p, cq.ErrClosed)
	}
	t.Logf("%d methods called on nil", n)
}

// TestBadInputHost passes a nil context to the constructors.
func TestBadInputHost(t *testing.T) {
	n := testenv.RunBad(t, nil, []testenv.BadCase{
		testenv.Bad("New: nil context", uverbs.ErrInvalid, func() error {
			_, err := cq.New(nil, 1, nil)
			return err
		}),
		testenv.Bad("NewChannel: nil context", uverbs.ErrInvalid, func() error {
			_, err := cq.NewChannel(nil)
			return err
		}),
		// CallMethods calls Completions on nil but does not range over it.
		testenv.Bad("Completions: nil CQ", cq.ErrClosed, func() error {
			var got error
			n := 0
			for wc, err := range (*cq.CQ)(nil).Completions(1) {
				if n++; err == nil || n > 1 || wc != (cq.WC{}) {
					return fmt.Errorf("yielded %+v, %v as value %d; want one zero WC with an error", wc, err, n)
				}
				got = err
			}
			return got
		}),
	})
	t.Logf("%d bad inputs tried", n)
}

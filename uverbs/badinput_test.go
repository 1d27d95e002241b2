package uverbs_test

import (
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/uverbs"
)

// TestNilReceivers calls every method of every object type on a nil
// pointer: each returns ErrClosed, none panics.
func TestNilReceivers(t *testing.T) {
	n := 0
	for _, p := range []any{(*uverbs.Context)(nil), (*uverbs.PD)(nil), (*uverbs.QP)(nil), (*uverbs.SRQ)(nil), (*uverbs.AH)(nil)} {
		n += testenv.NilReceiver(t, p, uverbs.ErrClosed)
	}
	t.Logf("%d methods called on nil", n)
}

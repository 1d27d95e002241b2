package cq_test

import (
	"testing"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
)

// TestNilReceivers calls every method of CQ and Channel on a nil pointer:
// each returns ErrClosed, none panics.
func TestNilReceivers(t *testing.T) {
	n := 0
	for _, p := range []any{(*cq.CQ)(nil), (*cq.Channel)(nil)} {
		n += testenv.NilReceiver(t, p, cq.ErrClosed)
	}
	t.Logf("%d methods called on nil", n)
}

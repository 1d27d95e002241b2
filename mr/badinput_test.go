package mr_test

import (
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// TestNilReceivers calls every method of MR on a nil pointer: each returns
// ErrClosed, none panics.
func TestNilReceivers(t *testing.T) {
	n := testenv.NilReceiver(t, (*mr.MR)(nil), uverbs.ErrClosed)
	t.Logf("%d methods called on nil", n)
}

package rdmacm_test

import (
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rdmacm"
)

// TestNilReceivers calls every method of EventChannel and ID on a nil
// pointer: each returns ErrClosed, none panics.
func TestNilReceivers(t *testing.T) {
	n := 0
	for _, p := range []any{(*rdmacm.EventChannel)(nil), (*rdmacm.ID)(nil)} {
		n += testenv.CallMethods(t, p, rdmacm.ErrClosed)
	}
	t.Logf("%d methods called on nil", n)
}

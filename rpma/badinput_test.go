package rpma_test

import (
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rpma"
)

// TestNilReceivers calls every method of every object type on a nil
// pointer: each returns ErrInvalid, as librpma does for a NULL object, and
// none panics.
func TestNilReceivers(t *testing.T) {
	n := 0
	for _, p := range []any{(*rpma.Peer)(nil), (*rpma.Endpoint)(nil), (*rpma.ConnRequest)(nil), (*rpma.Conn)(nil),
		(*rpma.CQ)(nil), (*rpma.MR)(nil), (*rpma.RemoteMR)(nil), (*rpma.SRQ)(nil), (*rpma.ConnConfig)(nil), (*rpma.SRQConfig)(nil),
		(*rpma.Client)(nil), (*rpma.Listener)(nil), (*rpma.Messenger)(nil)} {
		n += testenv.CallMethods(t, p, rpma.ErrInvalid)
	}
	t.Logf("%d methods called on nil", n)
}

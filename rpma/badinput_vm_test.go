package rpma_test

import (
	"net/netip"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rpma"
)

// TestClosedObjects calls every method of a connection, its CQ, a region,
// an endpoint and a peer after their Close (Delete, Shutdown): each
// returns ErrInval, as for a nil object, and none blocks or panics.
func TestClosedObjects(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		client, server := connect(t, d, nil)
		ep, err := server.peer.Listen(netip.AddrPortFrom(netip.MustParseAddr(d.Addr), 0))
		if err != nil {
			t.Fatal(err)
		}
		if err := ep.Shutdown(); err != nil {
			t.Fatal(err)
		}
		q := client.conn.CQ()
		for _, c := range []*rpma.Conn{client.conn, server.conn} {
			c.Disconnect()
		}
		for _, c := range []*rpma.Conn{client.conn, server.conn} {
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if err := client.mr.Close(); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, o := range []any{client.conn, q, client.mr, ep} {
			n += testenv.CallMethods(t, o, rpma.ErrInval, "Close", "Shutdown")
		}
		t.Logf("%d methods called on closed objects of %s", n, d.Name)
	})
}

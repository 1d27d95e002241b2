package rpma_test

import (
	"net/netip"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rpma"
)

// TestClosedObjects calls every method of a connection, its CQ, a region
// and an endpoint after their Close: each returns ErrClosed (which Code
// maps to librpma's INVAL, as for a NULL object), and none blocks or
// panics. Then a peer, an SRQ and a used-up request.
func TestClosedObjects(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		client, server := connect(t, d, nil)
		ep, err := server.peer.Listen(netip.AddrPortFrom(netip.MustParseAddr(d.Addr), 0))
		if err != nil {
			t.Fatal(err)
		}
		if err := ep.Close(); err != nil {
			t.Fatal(err)
		}
		q := client.conn.CQ()
		remote, err := rpma.RemoteMRFromDescriptor(server.mr.Descriptor())
		if err != nil {
			t.Fatal(err)
		}
		// A region that stays open, so that the operations below get past
		// their arguments to the closed connection.
		buf, err := mr.Alloc(4096)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mr.Free(buf) })
		local, err := client.peer.RegisterMR(buf, rpma.UsageReadDst|rpma.UsageWriteSrc|rpma.UsageSend|rpma.UsageRecv)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { local.Close() })
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
			n += testenv.CallMethods(t, o, rpma.ErrClosed, "Close")
		}
		c, always := client.conn, rpma.CompletionAlways
		n += testenv.RunBad(t, nil, []testenv.BadCase{
			testenv.Bad("Read on a closed connection", rpma.ErrClosed, func() error { return c.Read(local, 0, remote, 0, 8, rpma.Op{Flags: always, Context: 1}) }),
			testenv.Bad("Write on a closed connection", rpma.ErrClosed, func() error { return c.Write(remote, 0, local, 0, 8, rpma.Op{Flags: always, Context: 1}) }),
			testenv.Bad("WriteWithImm on a closed connection", rpma.ErrClosed, func() error { return c.WriteWithImm(remote, 0, local, 0, 8, 7, rpma.Op{Flags: always, Context: 1}) }),
			testenv.Bad("AtomicWrite on a closed connection", rpma.ErrClosed, func() error { return c.AtomicWrite(remote, 0, [8]byte{1}, rpma.Op{Flags: always, Context: 1}) }),
			testenv.Bad("Flush on a closed connection", rpma.ErrClosed, func() error { return c.Flush(remote, 0, 8, rpma.FlushVisibility, rpma.Op{Flags: always, Context: 1}) }),
			testenv.Bad("Send on a closed connection", rpma.ErrClosed, func() error { return c.Send(local, 0, 8, rpma.Op{Flags: always, Context: 1}) }),
			testenv.Bad("SendWithImm on a closed connection", rpma.ErrClosed, func() error { return c.SendWithImm(local, 0, 8, 7, rpma.Op{Flags: always, Context: 1}) }),
			testenv.Bad("Recv on a closed connection", rpma.ErrClosed, func() error { return c.Recv(local, 0, 8, 1) }),
			testenv.Bad("Advise on a closed region", rpma.ErrClosed, func() error { return client.mr.Advise(0, 8, 0, 0) }),
		})

		// A peer of its own, an SRQ and a request, each closed (the
		// request used up by its Close), then every method again; a
		// second Close does nothing, as librpma's delete of a NULL
		// pointer.
		peer, err := rpma.NewPeer(client.peer.Context())
		if err != nil {
			t.Fatal(err)
		}
		srq, err := server.peer.NewSRQ(nil)
		if err != nil {
			t.Fatal(err)
		}
		ep2, err := server.peer.Listen(netip.AddrPortFrom(netip.MustParseAddr(d.Addr), 0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ep2.Close() })
		addr, err := ep2.Addr()
		if err != nil {
			t.Fatal(err)
		}
		req, err := client.peer.NewConnRequest(ctxT(t), addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []interface{ Close() error }{peer, srq, req, peer, srq, req, ep, client.mr} {
			if err := c.Close(); err != nil {
				t.Errorf("%T.Close: %v", c, err)
			}
		}
		for _, o := range []any{peer, srq, req} {
			n += testenv.CallMethods(t, o, rpma.ErrClosed, "Close")
		}
		t.Logf("%d methods called on closed objects of %s", n, d.Name)
	})
}

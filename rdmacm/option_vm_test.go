package rdmacm_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/cmtest"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// TestOptionsAndQueries sets the ID options, queries a resolved route
// and migrates an ID to another channel before connecting it.
func TestOptionsAndQueries(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx := ctxT(t)
		l, err := cmtest.Channel(t).CreateID(rdmacm.TCP)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.SetReuseAddr(true); err != nil {
			t.Fatal(err)
		}
		if err := l.Bind(netip.AddrPortFrom(netip.MustParseAddr(d.Addr), 0)); err != nil {
			t.Fatal(err)
		}
		if err := l.Listen(1); err != nil {
			t.Fatal(err)
		}
		addr, err := l.LocalAddr()
		if err != nil {
			t.Fatal(err)
		}
		c, err := cmtest.Channel(t).CreateID(rdmacm.TCP)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.SetTOS(0x20); err != nil {
			t.Fatal(err)
		}
		if err := c.ResolveAddr(netip.AddrPort{}, addr, time.Second); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitEvent(ctx, rdmacm.EventAddrResolved); err != nil {
			t.Fatal(err)
		}
		if err := c.SetAckTimeout(14); err != nil {
			t.Fatal(err)
		}
		if err := c.ResolveRoute(time.Second); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitEvent(ctx, rdmacm.EventRouteResolved); err != nil {
			t.Fatal(err)
		}
		if src, err := c.LocalAddr(); err != nil || src.Addr() != addr.Addr() {
			t.Errorf("local address %v, %v; want %s", src, err, addr.Addr())
		}
		if dst, err := c.RemoteAddr(); err != nil || dst != addr {
			t.Errorf("remote address %v, %v; want %s", dst, err, addr)
		}
		if d.RoCE() {
			// RoCE routes by GID: the IPv4-mapped GID of the address.
			src, dst, err := c.GIDs()
			want := uverbs.GID(netip.AddrFrom16(addr.Addr().As16()).As16())
			if err != nil || src != want || dst != want {
				t.Errorf("GIDs %s -> %s, %v; want %s both", src, dst, err, want)
			}
			if n, err := c.NumPaths(); err != nil || n < 1 {
				t.Errorf("NumPaths = %d, %v; want at least 1", n, err)
			}
		}
		other := cmtest.Channel(t)
		if err := c.Migrate(other); err != nil {
			t.Fatal(err)
		}
		if c.Channel() != other {
			t.Fatal("Migrate left the ID on its old channel")
		}
		if err := c.CreateQP(nil, uverbs.QPInit{Cap: qpCap}); err != nil {
			t.Fatal(err)
		}
		if err := c.Connect(&rdmacm.ConnParam{RetryCount: 7, RNRRetryCount: 7}); err != nil {
			t.Fatal(err)
		}
		req, err := l.WaitEvent(ctx, rdmacm.EventConnectRequest)
		if err != nil {
			t.Fatal(err)
		}
		if err := req.ID.Reject(nil); err != nil {
			t.Fatal(err)
		}
		// The event arrives on the channel the ID moved to.
		if _, err := c.WaitEvent(ctx, rdmacm.EventRejected); err != nil {
			t.Fatal(err)
		}
		req.ID.Close()
	})
}

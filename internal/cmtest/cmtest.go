// Package cmtest holds the helpers the device tests of rdmacm and the
// tests under test/ share to set up connections through the CM.
package cmtest

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// Channel returns a new event channel, closed with its IDs at the end of
// the test.
func Channel(t testing.TB) *rdmacm.EventChannel {
	t.Helper()
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ch.Close(); err != nil {
			t.Errorf("channel close: %v", err)
		}
	})
	return ch
}

// Listen has a listener in port space ps, on a channel of its own,
// listen on addr at a port the kernel picks, and returns it and the
// address it is bound to.
func Listen(t testing.TB, addr netip.Addr, ps rdmacm.PortSpace) (*rdmacm.ID, netip.AddrPort) {
	t.Helper()
	l, err := Channel(t).CreateID(ps)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Bind(netip.AddrPortFrom(addr, 0)); err != nil {
		t.Fatal(err)
	}
	if err := l.Listen(4); err != nil {
		t.Fatal(err)
	}
	a, err := l.LocalAddr()
	if err != nil {
		t.Fatal(err)
	}
	if a.Port() == 0 || a.Addr() != addr {
		t.Fatalf("listener bound to %s, want %s with a port", a, addr)
	}
	return l, a
}

// Dial has an ID in port space ps, on a channel of its own, resolve the
// address and the route to addr, each within timeout, and create a QP
// with qpCap: the ID is ready to Connect.
func Dial(t testing.TB, ctx context.Context, addr netip.AddrPort, ps rdmacm.PortSpace, qpCap uverbs.QPCap, timeout time.Duration) *rdmacm.ID {
	t.Helper()
	c, err := Channel(t).CreateID(ps)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Resolve(ctx, addr, timeout); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateQP(nil, uverbs.QPInit{Cap: qpCap}); err != nil {
		t.Fatal(err)
	}
	return c
}

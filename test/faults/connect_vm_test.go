package faults_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rpma"
	"golang.org/x/sys/unix"
)

// TestConnectNoListener connects to a port of the device's own address
// where nothing listens. The request resolves (the address is local) and
// the connection is refused. On rxe, rdma_cm answers the REQ for an
// unbound port with a REJ: Connect succeeds and the event is
// ConnRejected. On siw, iw_cm's connect is siw's TCP connect, made
// within the call: Connect itself fails with ECONNREFUSED (ErrProvider).
func TestConnectNoListener(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		s := newSide(t, d, rpma.ContextRemote, usageClient)
		ctx := ctxFor(t, 30*time.Second)
		addr := netip.AddrPortFrom(netip.MustParseAddr(d.Addr), uint16(testenv.FreePort(t)))
		req, err := s.peer.NewConnRequest(ctx, addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		c, err := req.Connect(nil)
		switch d.Driver {
		case "siw":
			t.Logf("%s: Connect: %v after %v", d.Name, err, time.Since(start))
			if !errors.Is(err, rpma.ErrProvider) || !errors.Is(err, unix.ECONNREFUSED) {
				t.Errorf("Connect: %v, want ErrProvider and ECONNREFUSED", err)
			}
			if err == nil {
				c.Close()
			}
		default:
			if err != nil {
				t.Fatal(err)
			}
			ev, err := c.NextEvent(ctx)
			t.Logf("%s: %v, %v after %v", d.Name, ev, err, time.Since(start))
			if err != nil || ev != rpma.ConnRejected {
				t.Errorf("event %v, %v; want %v", ev, err, rpma.ConnRejected)
			}
			if err := c.Close(); err != nil {
				t.Errorf("conn close: %v", err)
			}
		}
		reconnect(t, d)
	})
}

// TestConnectUnreachable connects to addresses no host answers: one on
// the device's subnet (address resolution waits for an ARP reply that
// never comes) and one without a route. NewConnRequest fails, within its
// resolution timeout, with ErrProvider; a context that ends first ends it
// with the context's error. Both addresses are silent in the VM only: on
// another host the device's neighbour may well answer, and a default
// route reaches TEST-NET-1, so the test needs the VM's network.
func TestConnectUnreachable(t *testing.T) {
	if !testenv.InVM() {
		testenv.Devices(t) // skips on a host without RDMA, as before
		t.Skip("needs the VM's network: the next address of the device's subnet silent (the veth's other end has none) and no route to 192.0.2.1")
	}
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		s := newSide(t, d, rpma.ContextRemote, usageClient)
		// The veth's other end has no address: .2 of the subnet is
		// nobody.
		neighbour := netip.MustParseAddr(d.Addr).Next()
		for _, tc := range []struct {
			name string
			addr netip.Addr
		}{
			{"silent neighbour", neighbour},
			{"no route", netip.MustParseAddr("192.0.2.1")}, // TEST-NET-1
		} {
			cfg := rpma.DefaultConnConfig()
			cfg.Timeout = 500 * time.Millisecond
			ctx := ctxFor(t, 30*time.Second)
			start := time.Now()
			req, err := s.peer.NewConnRequest(ctx, netip.AddrPortFrom(tc.addr, 7471), &cfg)
			t.Logf("%s: %s: %v after %v", d.Name, tc.name, err, time.Since(start))
			if err == nil {
				req.Close()
			}
			if !errors.Is(err, rpma.ErrProvider) {
				t.Errorf("%s: %v, want ErrProvider", tc.name, err)
			}
		}
		// A context that ends before the resolution timeout ends the wait.
		cfg := rpma.DefaultConnConfig()
		cfg.Timeout = 20 * time.Second
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		req, err := s.peer.NewConnRequest(ctx, netip.AddrPortFrom(neighbour, 7471), &cfg)
		if err == nil {
			req.Close()
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("with a context of 300ms: %v, want DeadlineExceeded", err)
		}
		reconnect(t, d)
	})
}

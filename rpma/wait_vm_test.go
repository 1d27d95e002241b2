package rpma_test

import (
	"context"
	"errors"
	"net/netip"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/cmtest"
	"github.com/purerdma/purerdma/internal/rpmatest"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/rpma"
)

// TestWaitPeerGone blocks a server in CQ.Wait, Conn.Wait or Messenger.Recv and has its
// peer disappear: killed in a child process (its kernel disconnects it),
// or disconnecting. The wait must end with an error of code
// CodeNoCompletion matching rdmacm.ErrDisconnected and ECONNRESET within
// the hang guard, leave no goroutine behind, and leave ConnClosed to
// NextEvent.
func TestWaitPeerGone(t *testing.T) {
	waits := []struct {
		name   string
		shared bool
		wait   func(ctx context.Context, c *rpma.Conn) error
	}{
		{"CQ.Wait", false, func(ctx context.Context, c *rpma.Conn) error { return c.CQ().Wait(ctx) }},
		{"Conn.Wait", true, func(ctx context.Context, c *rpma.Conn) error {
			_, _, err := c.Wait(ctx)
			return err
		}},
		{"Messenger.Recv", false, func(ctx context.Context, c *rpma.Conn) error {
			m, err := messengerOf(c)
			if err != nil {
				return err
			}
			msg, err := m.Recv(ctx)
			msg.Release()
			return err
		}},
	}
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		for _, how := range []string{"killed", "disconnect"} {
			for _, w := range waits {
				t.Run(how+"/"+w.name, func(t *testing.T) {
					testenv.CheckLeaks(t)
					waitPeerGone(t, d, how == "killed", w.shared, w.wait)
				})
			}
		}
	})
}

func waitPeerGone(t *testing.T, d testenv.Dev, kill, shared bool, wait func(context.Context, *rpma.Conn) error) {
	ctx := ctxT(t)
	addr := netip.MustParseAddr(d.Addr)
	server := rpmatest.NewSide(t, ctx, addr, rpma.ContextLocal, 4096, rpma.UsageRecv)
	ep, err := server.Peer.Listen(netip.AddrPortFrom(addr, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	epAddr, err := ep.Addr()
	if err != nil {
		t.Fatal(err)
	}
	cfg := rpma.ConnConfig{SharedCompChannel: shared}
	var conn *rpma.Conn
	var leave func()
	if kill {
		ready, killPeer := cmtest.StartPeer(t, epAddr.String())
		req, err := ep.NextConnRequest(ctx, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		if conn, err = req.Connect(nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		if err := rpmatest.WantEvent(ctx, conn, rpma.ConnEstablished); err != nil {
			t.Fatal(err)
		}
		if err := ready(); err != nil {
			t.Fatal(err)
		}
		leave = killPeer
	} else {
		client := rpmatest.NewSide(t, ctx, addr, rpma.ContextRemote, 4096, rpma.UsageSend)
		c, s, err := rpmatest.Connect(ctx, ep, client.Peer, &cfg, &cfg, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		t.Cleanup(func() { s.Close() })
		conn = s
		leave = func() {
			if err := c.Disconnect(); err != nil {
				t.Errorf("client disconnect: %v", err)
			}
		}
	}

	before := runtime.NumGoroutine()
	time.AfterFunc(200*time.Millisecond, leave)
	// The bound is a hang guard, not a timing requirement.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	err = wait(wctx, conn)
	for err == nil && time.Since(start) < 10*time.Second {
		// A wake-up may find no completion (and the connection up yet).
		err = wait(wctx, conn)
	}
	if !errors.Is(err, rdmacm.ErrDisconnected) || !errors.Is(err, syscall.ECONNRESET) || rpma.Code(err) != rpma.CodeNoCompletion {
		t.Fatalf("the wait ended after %v with %v (code %d), want one of code %d matching rdmacm.ErrDisconnected and ECONNRESET",
			time.Since(start), err, rpma.Code(err), rpma.CodeNoCompletion)
	}
	testenv.GoroutinesBack(t, before, "the wait")
	if err := rpmatest.WantEvent(ctx, conn, rpma.ConnClosed); err != nil {
		t.Errorf("NextEvent after the wait: %v", err)
	}
	if err := conn.Disconnect(); err != nil {
		t.Error(err)
	}
}

var messengers sync.Map // *rpma.Conn -> *rpma.Messenger: one per connection

// messengerOf returns c's Messenger, made on first use (the wait runs
// again after a wake-up with nothing to report); closing c closes it.
func messengerOf(c *rpma.Conn) (*rpma.Messenger, error) {
	if m, ok := messengers.Load(c); ok {
		return m.(*rpma.Messenger), nil
	}
	m, err := rpma.NewMessenger(c, 64, 2)
	if err != nil {
		return nil, err
	}
	messengers.Store(c, m)
	return m, nil
}

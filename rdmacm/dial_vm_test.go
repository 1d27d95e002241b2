package rdmacm_test

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/cmtest"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// accepted runs l.Accept in a goroutine, for a client of the same
// process; the ID comes on the channel, or nil after a failure that the
// test reports.
func accepted(t *testing.T, ctx context.Context, l *rdmacm.Listener) <-chan *rdmacm.ID {
	t.Helper()
	out := make(chan *rdmacm.ID, 1)
	go func() {
		id, err := l.Accept(ctx)
		if err != nil {
			t.Errorf("accept: %v", err)
		}
		out <- id
	}()
	return out
}

// closeT closes c at the end of the test, failing it if Close fails.
func closeT(t *testing.T, what string, c interface{ Close() error }) {
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close %s: %v", what, err)
		}
	})
}

// TestDialListen connects with the one-call API and the zero Config on
// every device, each side's private data reaching the other, and runs a
// send/receive and an RDMA read over it: the zero Config's nil ConnParam
// grants RDMA reads.
func TestDialListen(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx := ctxT(t)
		l, err := rdmacm.Listen(netip.AddrPortFrom(netip.MustParseAddr(d.Addr), 0).String())
		if err != nil {
			t.Fatal(err)
		}
		closeT(t, "listener", l)
		if l.Addr().Port() == 0 || l.Addr().Addr().String() != d.Addr {
			t.Fatalf("listener on %s, want %s with a port", l.Addr(), d.Addr)
		}
		sbuf, err := mr.AllocRegister(l.PD(), 64, uverbs.LocalWrite|uverbs.RemoteRead)
		if err != nil {
			t.Fatal(err)
		}
		closeT(t, "server buffer", sbuf)
		copy(sbuf.Bytes(), "the server's memory")
		l.SetPrivateData([]byte("from the server"))
		srv := accepted(t, ctx, l)
		cfg := rdmacm.Config{PrivateData: []byte("from the client")}
		c, err := cfg.Dial(ctx, l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		closeT(t, "client", c)
		s := <-srv
		if s == nil {
			t.FailNow()
		}
		closeT(t, "server ID", s)
		for _, p := range []struct {
			side string
			got  []byte
			want string
		}{{"client", c.PrivateData(), "from the server"}, {"server", s.PrivateData(), "from the client"}} {
			// InfiniBand's messages have a fixed size: zeros follow.
			if !bytes.HasPrefix(p.got, []byte(p.want)) {
				t.Errorf("the %s got private data %q, want %q first", p.side, p.got, p.want)
			}
		}
		cbuf, err := mr.AllocRegister(c.PD(), 64, uverbs.LocalWrite)
		if err != nil {
			t.Fatal(err)
		}
		closeT(t, "client buffer", cbuf)
		rbuf, err := mr.AllocRegister(s.PD(), 64, uverbs.LocalWrite)
		if err != nil {
			t.Fatal(err)
		}
		closeT(t, "receive buffer", rbuf)

		if err := s.PostRecv(1, rbuf.MR(), 0, rbuf.Len()); err != nil {
			t.Fatal(err)
		}
		n := copy(cbuf.Bytes(), "ping")
		if err := c.PostSend(2, cbuf.MR(), 0, n, uverbs.SendSignaled); err != nil {
			t.Fatal(err)
		}
		wantWC(t, ctx, "send", c.GetSendComp, 2)
		wc := wantWC(t, ctx, "receive", s.GetRecvComp, 1)
		if got := string(rbuf.Bytes()[:wc.ByteLen]); got != "ping" {
			t.Errorf("received %q, want %q", got, "ping")
		}

		r := rdmacm.Remote{Addr: sbuf.Addr(), RKey: sbuf.RKey()}
		if err := c.PostRead(3, cbuf.MR(), 0, 19, uverbs.SendSignaled, r); err != nil {
			t.Fatal(err)
		}
		wantWC(t, ctx, "read", c.GetSendComp, 3)
		if got := string(cbuf.Bytes()[:19]); got != "the server's memory" {
			t.Errorf("read %q, want %q", got, "the server's memory")
		}
	})
}

func wantWC(t *testing.T, ctx context.Context, what string, get func(context.Context) (cq.WC, error), id uint64) cq.WC {
	t.Helper()
	wc, err := get(ctx)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := wc.Err(); err != nil || wc.ID != id {
		t.Fatalf("%s: completion %d: %v, want %d without error", what, wc.ID, err, id)
	}
	return wc
}

// TestDialFails checks that Dial reports an address where nobody
// listens, and that Accept rejects a request it cannot set up and goes
// on.
func TestDialFails(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx := ctxT(t)
		// A free port of the device's address: nobody listens there.
		l, err := rdmacm.Listen(netip.AddrPortFrom(netip.MustParseAddr(d.Addr), 0).String())
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		// iWARP's connect fails at once (ECONNREFUSED from the kernel);
		// RoCE's with its event.
		_, err = rdmacm.Dial(ctx, addr)
		var ue *rdmacm.UnexpectedEventError
		if !errors.Is(err, syscall.ECONNREFUSED) && (!errors.As(err, &ue) || (ue.Event.Type != rdmacm.EventUnreachable && ue.Event.Type != rdmacm.EventConnectError)) {
			t.Errorf("Dial(%s) with no listener: %v, want a refused or unreachable connection", addr, err)
		}

		// A server whose QPs cannot be made rejects each request and
		// goes on waiting for the next.
		bad := rdmacm.Config{QPCap: uverbs.QPCap{MaxSendWR: 1 << 30}}
		l, err = bad.Listen(netip.AddrPortFrom(netip.MustParseAddr(d.Addr), 0).String())
		if err != nil {
			t.Fatal(err)
		}
		closeT(t, "listener", l)
		actx, cancel := context.WithCancel(ctx)
		accepted := make(chan error, 1)
		go func() {
			id, err := l.Accept(actx)
			if id != nil {
				id.Close()
			}
			accepted <- err
		}()
		for i := range 2 {
			if _, err := rdmacm.Dial(ctx, l.Addr().String()); !errors.Is(err, rdmacm.ErrRejected) {
				t.Errorf("Dial %d to a server that cannot make QPs: %v, want ErrRejected", i, err)
			}
		}
		select {
		case err := <-accepted:
			t.Errorf("Accept returned after a failed request: %v, want it to go on", err)
		default:
		}
		cancel()
		if err := <-accepted; !errors.Is(err, context.Canceled) {
			t.Errorf("Accept after its context ended: %v, want context.Canceled", err)
		}
	})
}

// TestPeerGone blocks a server in each completion wait of an ID and has
// its peer disappear: killed in a child process (its kernel disconnects),
// or disconnecting. The wait must end with ErrDisconnected (matching
// ECONNRESET) within the hang guard, after handing out the receive the
// server had posted if the QP flushed it meanwhile (iWARP moves the QP to
// the error state itself), leave no goroutine behind, and leave the
// disconnection to WaitEvent. After the server's own Disconnect the
// receive comes out flushed if it had not yet, and then ErrDisconnected
// again.
func TestPeerGone(t *testing.T) {
	waits := []struct {
		name string
		// wait returns the completion it found, if any.
		wait func(ctx context.Context, id *rdmacm.ID) (*cq.WC, error)
	}{
		{"GetRecvComp", func(ctx context.Context, id *rdmacm.ID) (*cq.WC, error) {
			wc, err := id.GetRecvComp(ctx)
			return &wc, err
		}},
		{"GetSendComp", func(ctx context.Context, id *rdmacm.ID) (*cq.WC, error) {
			wc, err := id.GetSendComp(ctx)
			return &wc, err
		}},
		{"WaitCQ", func(ctx context.Context, id *rdmacm.ID) (*cq.WC, error) {
			q := id.RecvCQ()
			var wc [1]cq.WC
			if err := q.ReqNotify(false); err != nil {
				return nil, err
			}
			if n, err := q.Poll(wc[:]); err != nil || n == 1 {
				return &wc[0], err
			}
			if _, err := id.WaitCQ(ctx, q.Channel()); err != nil {
				return nil, err
			}
			if n, err := q.Poll(wc[:]); err != nil || n == 1 {
				return &wc[0], err
			}
			return nil, nil // a wake-up without a completion
		}},
	}
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		for _, how := range []string{"killed", "disconnect"} {
			for _, w := range waits {
				t.Run(how+"/"+w.name, func(t *testing.T) {
					testenv.CheckLeaks(t)
					peerGone(t, d, how == "killed", w.wait)
				})
			}
		}
	})
}

func peerGone(t *testing.T, d testenv.Dev, kill bool, wait func(context.Context, *rdmacm.ID) (*cq.WC, error)) {
	ctx := ctxT(t)
	l, err := rdmacm.Listen(netip.AddrPortFrom(netip.MustParseAddr(d.Addr), 0).String())
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, "listener", l)
	var leave func()
	var s *rdmacm.ID
	if kill {
		srv := accepted(t, ctx, l)
		ready, killPeer := cmtest.StartPeer(t, l.Addr().String())
		if err := ready(); err != nil {
			t.Fatal(err)
		}
		leave = killPeer
		if s = <-srv; s == nil {
			t.FailNow()
		}
	} else {
		srv := accepted(t, ctx, l)
		c, err := rdmacm.Dial(ctx, l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		closeT(t, "client", c)
		if s = <-srv; s == nil {
			t.FailNow()
		}
		leave = func() {
			if err := c.Disconnect(); err != nil {
				t.Errorf("client disconnect: %v", err)
			}
		}
	}
	closeT(t, "server ID", s)
	buf, err := mr.AllocRegister(s.PD(), 64, uverbs.LocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, "buffer", buf)
	if err := s.PostRecv(7, buf.MR(), 0, buf.Len()); err != nil {
		t.Fatal(err)
	}

	before := runtime.NumGoroutine()
	time.AfterFunc(200*time.Millisecond, leave)
	// The bound is a hang guard, not a timing requirement.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	flushed := false // the receive came out, flushed
	for time.Since(start) < 10*time.Second {
		var wc *cq.WC
		wc, err = wait(wctx, s)
		if err != nil {
			break
		}
		if wc == nil {
			continue
		}
		if flushed || wc.ID != 7 || wc.Status != cq.WRFlushErr {
			t.Fatalf("the wait returned completion %d (%v), want receive 7 flushed, once", wc.ID, wc.Status)
		}
		flushed = true
	}
	if !errors.Is(err, rdmacm.ErrDisconnected) || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the wait ended after %v with %v, want ErrDisconnected matching ECONNRESET", time.Since(start), err)
	}
	testenv.GoroutinesBack(t, before, "the wait")

	// The event the wait saw is still the ID's.
	if _, err := s.WaitEvent(ctx, rdmacm.EventDisconnected); err != nil {
		t.Errorf("WaitEvent after the wait: %v", err)
	}
	// A wait now fails at once; after Disconnect the posted receive is
	// flushed, and comes out first.
	if _, err := s.GetSendComp(ctx); !errors.Is(err, rdmacm.ErrDisconnected) {
		t.Errorf("GetSendComp on an ended connection: %v, want ErrDisconnected", err)
	}
	if err := s.Disconnect(); err != nil {
		t.Fatal(err)
	}
	if !flushed {
		var wc cq.WC
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if wc, err = s.GetRecvComp(ctx); !errors.Is(err, rdmacm.ErrDisconnected) {
				break // the flush reached the CQ
			}
		}
		if err != nil || wc.ID != 7 || wc.Status != cq.WRFlushErr {
			t.Errorf("GetRecvComp after Disconnect: %+v, %v; want receive 7 flushed", wc, err)
		}
	}
	if _, err := s.GetRecvComp(ctx); !errors.Is(err, rdmacm.ErrDisconnected) {
		t.Errorf("GetRecvComp once the flushed receive was taken: %v, want ErrDisconnected", err)
	}
}

package rdmacm_test

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/cmtest"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/internal/verbstest"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

var qpCap = uverbs.QPCap{MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 32}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// listen has a listener in port space ps listen on the device's address.
func listen(t *testing.T, d testenv.Dev, ps rdmacm.PortSpace) (*rdmacm.ID, netip.AddrPort) {
	t.Helper()
	return cmtest.Listen(t, netip.MustParseAddr(d.Addr), ps)
}

// dialer resolves addr and route and creates the QP, ready to Connect.
func dialer(t *testing.T, addr netip.AddrPort, ps rdmacm.PortSpace, qpCap uverbs.QPCap) *rdmacm.ID {
	t.Helper()
	return cmtest.Dial(t, ctxT(t), addr, ps, qpCap, 2*time.Second)
}

func hasPrefix(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	if !bytes.HasPrefix(got, []byte(want)) || len(bytes.TrimRight(got[len(want):], "\x00")) != 0 {
		t.Errorf("%s private data %q, want %q (zero padded)", what, got, want)
	}
}

// TestConnect runs a connection with private data both ways, moves a
// message over it, and disconnects, on rxe and siw.
func TestConnect(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx := ctxT(t)
		l, addr := listen(t, d, rdmacm.TCP)
		c := dialer(t, addr, rdmacm.TCP, qpCap)
		if err := c.Connect(&rdmacm.ConnParam{PrivateData: []byte("hello from client"), ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7}); err != nil {
			t.Fatal(err)
		}
		req, err := l.WaitEvent(ctx, rdmacm.EventConnectRequest)
		if err != nil {
			t.Fatal(err)
		}
		s := req.ID
		if req.Listener != l || s == l {
			t.Fatalf("request: listener %p, ID %p; want the listener and a new ID", req.Listener, s)
		}
		hasPrefix(t, "request", req.Param.PrivateData, "hello from client")
		if s.Context() == nil || s.Context().Device().Name != d.Name {
			t.Fatalf("the request's ID is not bound to %s", d.Name)
		}
		if err := s.CreateQP(nil, uverbs.QPInit{Cap: qpCap}); err != nil {
			t.Fatal(err)
		}
		buf, region := memory(t, s.PD())
		if err := s.PostRecv(42, region, 0, 64); err != nil {
			t.Fatal(err)
		}
		if err := s.Accept(&rdmacm.ConnParam{PrivateData: []byte("welcome"), ResponderResources: 1, InitiatorDepth: 1}); err != nil {
			t.Fatal(err)
		}
		est, err := c.WaitEvent(ctx, rdmacm.EventEstablished)
		if err != nil {
			t.Fatal(err)
		}
		hasPrefix(t, "accept", est.Param.PrivateData, "welcome")
		if _, err := s.WaitEvent(ctx, rdmacm.EventEstablished); err != nil {
			t.Fatal(err)
		}
		for _, qp := range []*uverbs.QP{c.QP(), s.QP()} {
			// siw's query does not report the state; the send below shows
			// the QPs work on both.
			if d.Driver == "siw" {
				break
			}
			if a, err := qp.Query(uverbs.QPAttrState); err != nil || a.State != uverbs.QPSRTS {
				t.Errorf("QP %d state %v, %v; want RTS", qp.Num(), a.State, err)
			}
		}
		cbuf, cregion := memory(t, c.PD())
		copy(cbuf, "over the connection")
		if err := c.PostSend(7, cregion, 0, 19, uverbs.SendSignaled); err != nil {
			t.Fatal(err)
		}
		wc, err := c.GetSendComp(ctx)
		if err != nil || wc.Status != cq.Success || wc.ID != 7 {
			t.Fatalf("send completion %+v, %v", wc, err)
		}
		wc, err = s.GetRecvComp(ctx)
		if err != nil || wc.Status != cq.Success || wc.ID != 42 || wc.ByteLen != 19 {
			t.Fatalf("receive completion %+v, %v", wc, err)
		}
		if string(buf[:19]) != "over the connection" {
			t.Errorf("received %q", buf[:19])
		}
		hangUp(t, c, s)
	})
}

// hangUp disconnects as rping does, the passive side answering the
// peer's disconnect with its own (which completes the IB CM's DREQ/DREP
// exchange), and closes both IDs.
func hangUp(t *testing.T, active, passive *rdmacm.ID) {
	t.Helper()
	ctx := ctxT(t)
	if err := active.Disconnect(); err != nil {
		t.Fatal(err)
	}
	if _, err := passive.WaitEvent(ctx, rdmacm.EventDisconnected); err != nil {
		t.Fatal(err)
	}
	if err := passive.Disconnect(); err != nil {
		t.Fatal(err)
	}
	if _, err := active.WaitEvent(ctx, rdmacm.EventDisconnected); err != nil {
		t.Fatal(err)
	}
	for _, id := range []*rdmacm.ID{passive, active} {
		if err := id.Close(); err != nil {
			t.Errorf("ID close: %v", err)
		}
	}
}

// memory registers a buffer in pd, freed at the end of the test.
func memory(t *testing.T, pd *uverbs.PD) ([]byte, *mr.MR) {
	t.Helper()
	return verbstest.Memory(t, pd, 4096, uverbs.LocalWrite|uverbs.RemoteWrite|uverbs.RemoteRead)
}

// TestReject rejects a request with private data, and checks the private
// data limits.
func TestReject(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx := ctxT(t)
		l, addr := listen(t, d, rdmacm.TCP)
		c := dialer(t, addr, rdmacm.TCP, qpCap)
		err := c.Connect(&rdmacm.ConnParam{PrivateData: make([]byte, 57)})
		if !errors.Is(err, rdmacm.ErrPrivateData) || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("connect with 57 bytes: %v, want ErrPrivateData", err)
		}
		if err := c.Connect(&rdmacm.ConnParam{PrivateData: make([]byte, 56), RetryCount: 7, RNRRetryCount: 7}); err != nil {
			t.Fatalf("connect with 56 bytes: %v", err)
		}
		req, err := l.WaitEvent(ctx, rdmacm.EventConnectRequest)
		if err != nil {
			t.Fatal(err)
		}
		if err := req.ID.Accept(&rdmacm.ConnParam{PrivateData: make([]byte, 197)}); !errors.Is(err, rdmacm.ErrPrivateData) {
			t.Errorf("accept with 197 bytes: %v, want ErrPrivateData", err)
		}
		if err := req.ID.Reject(make([]byte, 149)); !errors.Is(err, rdmacm.ErrPrivateData) {
			t.Errorf("reject with 149 bytes: %v, want ErrPrivateData", err)
		}
		if err := req.ID.Reject([]byte("go away")); err != nil {
			t.Fatal(err)
		}
		e, err := c.WaitEvent(ctx, rdmacm.EventRejected)
		if err != nil {
			t.Fatal(err)
		}
		hasPrefix(t, "reject", e.Param.PrivateData, "go away")
		if !errors.Is(e.Err(), rdmacm.ErrRejected) {
			t.Errorf("rejected event error %v, want ErrRejected", e.Err())
		}
		req.ID.Close()
	})
}

// TestFailures checks that failures end in an event or error, not a hang.
func TestFailures(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		t.Run("nobody listens", func(t *testing.T) {
			_, addr := listen(t, d, rdmacm.TCP)
			c := dialer(t, netip.AddrPortFrom(addr.Addr(), addr.Port()+1), rdmacm.TCP, qpCap)
			// iWARP connects over TCP inside the CONNECT command, so a
			// refused connection is the command's error there.
			err := c.Connect(&rdmacm.ConnParam{RetryCount: 1})
			if d.Driver == "siw" && errors.Is(err, syscall.ECONNREFUSED) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			e, err := c.Channel().GetEvent(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			if e.Type != rdmacm.EventRejected && e.Type != rdmacm.EventUnreachable {
				t.Errorf("connect to a closed port: %s, want REJECTED or UNREACHABLE", e)
			}
		})
		t.Run("no device behind the address", func(t *testing.T) {
			c, err := cmtest.Channel(t).CreateID(rdmacm.TCP)
			if err != nil {
				t.Fatal(err)
			}
			err = c.ResolveAddr(netip.AddrPort{}, netip.MustParseAddrPort("10.255.255.1:7174"), 500*time.Millisecond)
			if err == nil {
				e, werr := c.WaitEvent(ctxT(t), rdmacm.EventAddrResolved)
				if werr == nil {
					t.Fatalf("resolved an address with no RDMA device behind it: %v", e)
				}
				err = werr
			}
			t.Logf("error: %v", err)
		})
		t.Run("cancel ends a wait", func(t *testing.T) {
			l, _ := listen(t, d, rdmacm.TCP)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			start := time.Now()
			if _, err := l.WaitEvent(ctx, rdmacm.EventConnectRequest); !errors.Is(err, context.Canceled) {
				t.Errorf("WaitEvent after cancel: %v", err)
			}
			// Only a hang guard: nothing but the cancel ends the wait.
			if el := time.Since(start); el > 10*time.Second {
				t.Errorf("cancel took %v", el)
			}
			if _, err := l.Channel().TryGetEvent(); !errors.Is(err, rdmacm.ErrNoEvent) || !errors.Is(err, syscall.EAGAIN) {
				t.Errorf("TryGetEvent with nothing pending: %v, want ErrNoEvent", err)
			}
		})
	})
}

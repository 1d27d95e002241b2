// Package rpmatest holds the helpers the device tests of rpma and the
// rpma tests under test/ share: a peer with registered memory, making a
// connection between them, and waiting for a completion.
package rpmatest

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rpma"
	"github.com/purerdma/purerdma/uverbs"
)

// Side is one end of a test connection: a device context, a peer and a
// registered region.
type Side struct {
	Ctx  *uverbs.Context
	Peer *rpma.Peer
	Buf  []byte
	MR   *rpma.MR
}

// NewSide opens the device of addr as typ and registers size bytes in a
// new peer for usage. All of it is freed at the end of the test.
func NewSide(t testing.TB, ctx context.Context, addr netip.Addr, typ rpma.ContextType, size int, usage rpma.Usage) *Side {
	t.Helper()
	return NewSideWithOptions(t, ctx, addr, typ, size, usage, rpma.PeerOptions{})
}

// NewSideWithOptions is NewSide with a peer made with opts.
func NewSideWithOptions(t testing.TB, ctx context.Context, addr netip.Addr, typ rpma.ContextType, size int, usage rpma.Usage, opts rpma.PeerOptions) *Side {
	t.Helper()
	s := &Side{}
	var err error
	if s.Ctx, err = rpma.ContextByAddr(ctx, addr, typ); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Ctx.Close(); err != nil {
			t.Errorf("context close: %v", err)
		}
	})
	if s.Peer, err = rpma.NewPeerWithOptions(s.Ctx, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Peer.Close(); err != nil {
			t.Errorf("peer close: %v", err)
		}
	})
	if s.Buf, err = mr.Alloc(size); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mr.Free(s.Buf) })
	if s.MR, err = s.Peer.RegisterMR(s.Buf, usage); err != nil {
		t.Fatal(err)
	}
	// A second Close of a region is a no-op: tests that deregister
	// early still get this one.
	t.Cleanup(func() {
		if err := s.MR.Close(); err != nil {
			t.Errorf("MR close: %v", err)
		}
	})
	return s
}

// Connect connects client to the server whose endpoint is ep, both in
// this process: the server takes the next request with scfg and answers
// it with spd as private data, the client connects with ccfg and cpd.
// Either both connections are established, or both are closed and err
// says why.
func Connect(ctx context.Context, ep *rpma.Endpoint, client *rpma.Peer, ccfg, scfg *rpma.ConnConfig, cpd, spd []byte) (cconn, sconn *rpma.Conn, err error) {
	addr, err := ep.Addr()
	if err != nil {
		return nil, nil, err
	}
	type result struct {
		conn *rpma.Conn
		err  error
	}
	// A client that fails before it connects leaves the server waiting
	// for a request: cancel ends that wait.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	accepted := make(chan result, 1)
	go func() {
		req, err := ep.NextConnRequest(ctx, scfg)
		if err != nil {
			accepted <- result{nil, err}
			return
		}
		conn, err := establish(ctx, req, spd)
		accepted <- result{conn, err}
	}()
	cconn, err = Dial(ctx, client, addr, ccfg, cpd)
	if err != nil {
		cancel()
	}
	r := <-accepted
	if err = errors.Join(err, r.err); err != nil {
		for _, c := range []*rpma.Conn{cconn, r.conn} {
			if c != nil {
				c.Close()
			}
		}
		return nil, nil, err
	}
	return cconn, r.conn, nil
}

// Dial has peer connect to addr with cfg, sending pd as private data,
// and waits until the connection is established.
func Dial(ctx context.Context, peer *rpma.Peer, addr netip.AddrPort, cfg *rpma.ConnConfig, pd []byte) (*rpma.Conn, error) {
	req, err := peer.NewConnRequest(ctx, addr, cfg)
	if err != nil {
		return nil, err
	}
	return establish(ctx, req, pd)
}

// establish connects req and waits for the connection to be
// established; a connection that is not is closed.
func establish(ctx context.Context, req *rpma.ConnRequest, pd []byte) (*rpma.Conn, error) {
	c, err := req.Connect(pd)
	if err != nil {
		return nil, err
	}
	if err := WantEvent(ctx, c, rpma.ConnEstablished); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// WantEvent waits for c's next event and says if it is not want.
func WantEvent(ctx context.Context, c *rpma.Conn, want rpma.ConnEvent) error {
	ev, err := c.NextEvent(ctx)
	if err == nil && ev != want {
		err = errors.New("event " + ev.String() + ", want " + want.String())
	}
	return err
}

// Complete waits for one completion on q and checks that it is the
// successful op of id.
func Complete(t testing.TB, ctx context.Context, q *rpma.CQ, id uint64, op cq.Opcode) cq.WC {
	t.Helper()
	wc := Next(t, ctx, q)
	if wc.Status != cq.Success || wc.ID != id || wc.Opcode != op {
		t.Fatalf("completion %+v, want ID %d %s success", wc, id, op)
	}
	return wc
}

// Next waits for one completion on q and returns it.
func Next(t testing.TB, ctx context.Context, q *rpma.CQ) cq.WC {
	t.Helper()
	var wc [1]cq.WC
	for {
		_, err := q.GetWC(wc[:])
		if err == nil {
			break
		}
		if !errors.Is(err, rpma.ErrNoCompletion) {
			t.Fatal(err)
		}
		if err := q.Wait(ctx); err != nil && !errors.Is(err, rpma.ErrNoCompletion) {
			t.Fatal(err)
		}
	}
	return wc[0]
}

// FlushedTwice reports whether w repeats the completion just before it,
// prev, in the shape siw's flush gives a read (docs/faults.md, "Reads
// completed twice on siw"): the same ID, both WR_FLUSH_ERR, one right
// after the other. siw_sq_flush (Linux 6.1 to 6.12 at least) completes
// the reads of the ORQ, then the transmitter's current request if it is
// still QUEUED, which a read is once siw_activate_tx_from_sq has copied it
// into the ORQ but before it went out. The caller checks that the
// operation was a read and the device siw.
func FlushedTwice(prev, w cq.WC) bool {
	return prev.ID == w.ID && prev.Status == cq.WRFlushErr && w.Status == cq.WRFlushErr
}

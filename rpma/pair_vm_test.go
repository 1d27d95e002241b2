package rpma_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rpma"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// side is one end of a test connection: its peer, a registered region
// and the connection.
type side struct {
	peer *rpma.Peer
	buf  []byte
	mr   *rpma.MR
	conn *rpma.Conn
}

func newSide(t *testing.T, d testenv.Dev, typ rpma.ContextType, usage rpma.Usage) *side {
	t.Helper()
	uctx, err := rpma.ContextByAddr(ctxT(t), netip.MustParseAddr(d.Addr), typ)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { uctx.Close() })
	s := &side{}
	if s.peer, err = rpma.NewPeer(uctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.peer.Close(); err != nil {
			t.Errorf("peer close: %v", err)
		}
	})
	if s.buf, err = mr.Alloc(4096); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mr.Free(s.buf) })
	if s.mr, err = s.peer.RegisterMR(s.buf, usage); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.mr.Close(); err != nil {
			t.Errorf("MR close: %v", err)
		}
	})
	return s
}

// connect makes a connection on d: the server sends its region's
// descriptor as private data, as librpma's examples do. cfg applies to
// both sides.
func connect(t *testing.T, d testenv.Dev, cfg *rpma.ConnConfig) (client, server *side) {
	t.Helper()
	server = newSide(t, d, rpma.ContextLocal, rpma.UsageReadSrc|rpma.UsageWriteDst|rpma.UsageFlushTypeVisibility|rpma.UsageFlushTypePersistent|rpma.UsageRecv|rpma.UsageSend)
	client = newSide(t, d, rpma.ContextRemote, rpma.UsageReadDst|rpma.UsageWriteSrc|rpma.UsageSend|rpma.UsageRecv)
	join(t, d, client, server, cfg, cfg)
	return client, server
}

// join connects client to server on d with a config for each side, and
// tears the connection down in librpma's order at the end of the test.
func join(t *testing.T, d testenv.Dev, client, server *side, ccfg, scfg *rpma.ConnConfig) {
	t.Helper()
	ctx := ctxT(t)
	ep, err := server.peer.Listen(netip.AddrPortFrom(netip.MustParseAddr(d.Addr), 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Shutdown() })
	if client.conn, server.conn, err = dial(ctx, ep, client, server, ccfg, scfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := hangUp(ctx, client.conn, server.conn); err != nil {
			t.Error(err)
		}
	})
}

// dial connects client to server through the server's endpoint ep: the
// server sends its region's descriptor as private data, as librpma's
// examples do.
func dial(ctx context.Context, ep *rpma.Endpoint, client, server *side, ccfg, scfg *rpma.ConnConfig) (cconn, sconn *rpma.Conn, err error) {
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
		conn, err := req.Connect(server.mr.Descriptor())
		if err == nil {
			err = established(ctx, conn)
		}
		accepted <- result{conn, err}
	}()
	req, err := client.peer.NewConnRequest(ctx, addr, ccfg)
	if err == nil {
		cconn, err = req.Connect([]byte("client"))
	}
	if err == nil {
		err = established(ctx, cconn)
	}
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

// established waits for a connection's first event, which must be
// ConnEstablished.
func established(ctx context.Context, c *rpma.Conn) error {
	ev, err := c.NextEvent(ctx)
	if err == nil && ev != rpma.ConnEstablished {
		err = fmt.Errorf("first connection event %v, want ESTABLISHED", ev)
	}
	return err
}

// hangUp ends a connection in librpma's order: the client disconnects,
// the server sees it closed and disconnects too; then both are closed.
func hangUp(ctx context.Context, client, server *rpma.Conn) error {
	client.Disconnect()
	server.NextEvent(ctx)
	server.Disconnect()
	client.NextEvent(ctx)
	var errs []error
	for _, c := range []*rpma.Conn{server, client} {
		if err := c.Close(); err != nil {
			errs = append(errs, fmt.Errorf("conn close: %w", err))
		}
	}
	return errors.Join(errs...)
}

// complete waits for one completion on q and checks it.
func complete(t *testing.T, q *rpma.CQ, id uint64, op cq.Opcode) cq.WC {
	t.Helper()
	ctx := ctxT(t)
	var wc [1]cq.WC
	for {
		err := q.GetWC(1, wc[:], nil)
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
	if wc[0].Status != cq.Success || wc[0].ID != id || wc[0].Opcode != op {
		t.Fatalf("completion %+v, want ID %d %s success", wc[0], id, op)
	}
	return wc[0]
}

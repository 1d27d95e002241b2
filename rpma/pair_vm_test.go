package rpma_test

import (
	"context"
	"errors"
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
	addr, err := ep.Addr()
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan error, 1)
	go func() {
		req, err := ep.NextConnRequest(ctx, scfg)
		if err != nil {
			accepted <- err
			return
		}
		server.conn, err = req.Connect(server.mr.Descriptor())
		if err == nil {
			var ev rpma.ConnEvent
			if ev, err = server.conn.NextEvent(ctx); err == nil && ev != rpma.ConnEstablished {
				err = errors.New(ev.String())
			}
		}
		accepted <- err
	}()
	req, err := client.peer.NewConnRequest(ctx, addr, ccfg)
	if err != nil {
		t.Fatal(err)
	}
	if client.conn, err = req.Connect([]byte("client")); err != nil {
		t.Fatal(err)
	}
	if ev, err := client.conn.NextEvent(ctx); err != nil || ev != rpma.ConnEstablished {
		t.Fatalf("client event %v, %v", ev, err)
	}
	if err := <-accepted; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// librpma's order: the client disconnects, the server sees it
		// closed and disconnects too.
		client.conn.Disconnect()
		server.conn.NextEvent(ctx)
		server.conn.Disconnect()
		client.conn.NextEvent(ctx)
		for _, c := range []*rpma.Conn{server.conn, client.conn} {
			if err := c.Close(); err != nil {
				t.Errorf("conn close: %v", err)
			}
		}
	})
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

package rpma_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/rpmatest"
	"github.com/purerdma/purerdma/internal/testenv"
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
	return newSideOpts(t, d, typ, usage, rpma.PeerOptions{})
}

func newSideOpts(t *testing.T, d testenv.Dev, typ rpma.ContextType, usage rpma.Usage, opts rpma.PeerOptions) *side {
	t.Helper()
	r := rpmatest.NewSideWithOptions(t, ctxT(t), netip.MustParseAddr(d.Addr), typ, 4096, usage, opts)
	return &side{peer: r.Peer, buf: r.Buf, mr: r.MR}
}

// emulated makes connect's peers flush the librpma 1.2 way on every
// kernel: its server registers UsageFlushTypePersistent, which rxe with
// native flush (Linux 6.2+) refuses for memory that is not persistent
// memory, as it does to librpma 1.3. flush_vm_test.go covers native
// flush.
var emulated = rpma.PeerOptions{Flush: rpma.FlushEmulated}

// connect makes a connection on d: the server sends its region's
// descriptor as private data, as librpma's examples do. cfg applies to
// both sides.
func connect(t *testing.T, d testenv.Dev, cfg *rpma.ConnConfig) (client, server *side) {
	t.Helper()
	server = newSideOpts(t, d, rpma.ContextLocal, rpma.UsageReadSrc|rpma.UsageWriteDst|rpma.UsageFlushTypeVisibility|rpma.UsageFlushTypePersistent|rpma.UsageRecv|rpma.UsageSend, emulated)
	client = newSideOpts(t, d, rpma.ContextRemote, rpma.UsageReadDst|rpma.UsageWriteSrc|rpma.UsageSend|rpma.UsageRecv, emulated)
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
	t.Cleanup(func() { ep.Close() })
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
	return rpmatest.Connect(ctx, ep, client.peer, ccfg, scfg, []byte("client"), server.mr.Descriptor())
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
	return rpmatest.Complete(t, ctxT(t), q, id, op)
}

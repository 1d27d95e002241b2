package faults_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/rpmatest"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/internal/verbstest"
	"github.com/purerdma/purerdma/rpma"
	"github.com/purerdma/purerdma/uverbs"
)

// regionSize is the size of every registered region: large enough that
// a read of all of it is still in flight a moment after posting.
const regionSize = 1 << 20

// serverText starts every server region, for the reads to check.
const serverText = "server memory"

// Usages of the two sides: the least each test's operations need.
const (
	usageServer = rpma.UsageReadSrc | rpma.UsageWriteDst
	usageClient = rpma.UsageReadDst | rpma.UsageWriteSrc
)

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// side is one end: a device context, a peer and a registered region.
type side struct {
	uctx *uverbs.Context
	peer *rpma.Peer
	buf  []byte
	mr   *rpma.MR
}

func newSide(t testing.TB, d testenv.Dev, typ rpma.ContextType, usage rpma.Usage) *side {
	t.Helper()
	r := rpmatest.NewSide(t, ctxFor(t, 10*time.Second), netip.MustParseAddr(d.Addr), typ, regionSize, usage)
	return &side{uctx: r.Ctx, peer: r.Peer, buf: r.Buf, mr: r.MR}
}

// pair is a connection made in this process: the client's conn, the
// server's, and the server's region as the client knows it.
type pair struct {
	client, server *side
	cc, sc         *rpma.Conn
	remote         *rpma.RemoteMR
	done           bool
}

// connect connects a client to a server on d. The server sends its
// region's descriptor as private data; cfg applies to the client.
func connect(t testing.TB, d testenv.Dev, cfg *rpma.ConnConfig, serverUsage rpma.Usage) *pair {
	t.Helper()
	p := &pair{
		server: newSide(t, d, rpma.ContextLocal, serverUsage),
		client: newSide(t, d, rpma.ContextRemote, usageClient),
	}
	copy(p.server.buf, serverText)
	ctx := ctxFor(t, 10*time.Second)
	ep, err := p.server.peer.Listen(netip.AddrPortFrom(netip.MustParseAddr(d.Addr), 0))
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	if p.cc, p.sc, err = rpmatest.Connect(ctx, ep, p.client.peer, cfg, nil, nil, p.server.mr.Descriptor()); err != nil {
		t.Fatal(err)
	}
	if p.remote, err = rpma.RemoteMRFromDescriptor(p.cc.PrivateData()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.close(t) })
	return p
}

// close tears the pair down in librpma's order, whatever state a fault
// left it in: disconnecting may fail then, closing must not.
func (p *pair) close(t testing.TB) {
	t.Helper()
	if p.done {
		return
	}
	p.done = true
	hangUp(t, p.cc)
	if p.sc != nil {
		hangUp(t, p.sc)
	}
}

// hangUp disconnects c, waits a little for its closing event and deletes
// it.
func hangUp(t testing.TB, c *rpma.Conn) {
	t.Helper()
	if err := c.Disconnect(); err != nil {
		t.Logf("disconnect: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if ev, err := c.NextEvent(ctx); err != nil || ev != rpma.ConnClosed {
		t.Logf("after disconnect: %v, %v", ev, err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("conn close: %v", err)
	}
}

// strands reports whether the driver may leave operations in the send
// queue for good once its QP has failed: siw does (see
// docs/kernel-notes.md), rxe flushes every one.
func strands(d testenv.Dev) bool { return d.Driver == "siw" }

// strandWait is how long collect and stream wait for another completion
// before they count the rest as stranded.
const strandWait = 5 * time.Second

// collect waits up to timeout for the completions of operations 1..n,
// posted in that order on c, and fails the test if any is missing. At the
// first failed one it disconnects c, as a librpma user does. With strand
// (siw), operations may be stranded once the QP has failed, which a
// success can hide (a write to a bad key completes before the peer's
// TERMINATE comes back): then collect returns what came within
// strandWait of the last completion, and checks that the stranded ones
// are the last posted: a completion missing before another that came is
// a drop.
func collect(t testing.TB, c *rpma.Conn, n int, strand bool, timeout time.Duration) []cq.WC {
	t.Helper()
	ctx := ctxFor(t, timeout)
	wc := make([]cq.WC, n)
	got := 0
	var lastAt time.Time // of the last completion
	failed := false
	for got < n {
		m, err := c.CQ().GetWC(wc[got:])
		switch {
		case err == nil:
			for _, w := range wc[got : got+m] {
				if w.Status != cq.Success && !failed {
					failed = true
					if err := c.Disconnect(); err != nil {
						t.Logf("disconnect: %v", err)
					}
				}
			}
			got += m
			lastAt = time.Now()
			continue
		case !errors.Is(err, rpma.ErrNoCompletion):
			t.Fatalf("GetWC: %v", err)
		}
		var wait context.Context
		var cancel context.CancelFunc
		if strand && !lastAt.IsZero() {
			wait, cancel = context.WithDeadline(ctx, lastAt.Add(strandWait))
		} else {
			wait, cancel = context.WithCancel(ctx)
		}
		err = c.CQ().Wait(wait)
		cancel()
		if err != nil && !errors.Is(err, rpma.ErrNoCompletion) {
			if ctx.Err() == nil {
				break // stranded
			}
			t.Fatalf("%d of %d completions after %v: %+v (%v)", got, n, timeout, wc[:got], err)
		}
	}
	wc = verbstest.SortWC(wc[:got])
	for i, w := range wc {
		if w.ID != uint64(i+1) {
			t.Fatalf("completions %+v: operation %d is missing before later ones", wc, i+1)
		}
	}
	if got < n {
		t.Logf("operations %d to %d stranded", got+1, n)
	}
	return wc
}

// stranded stands for the status of an operation that never completed.
const stranded = cq.Status(1 << 31)

// statuses returns the statuses of operations 1..n from their
// completions, stranded for those without one.
func statuses(wc []cq.WC, n int) []cq.Status {
	s := make([]cq.Status, n)
	for i := range s {
		s[i] = stranded
	}
	for _, w := range wc {
		s[w.ID-1] = w.Status
	}
	return s
}

// reconnect checks that the process can still make a connection on d
// and read through it, after a fault.
func reconnect(t *testing.T, d testenv.Dev) {
	t.Helper()
	p := connect(t, d, nil, usageServer)
	if err := p.cc.Read(p.client.mr, 0, p.remote, 0, len(serverText), rpma.Op{Flags: rpma.CompletionAlways, Context: 1}); err != nil {
		t.Fatal(err)
	}
	if wc := collect(t, p.cc, 1, false, 10*time.Second); wc[0].Status != cq.Success {
		t.Fatalf("read after reconnecting: %+v", wc[0])
	}
	verbstest.WantBytes(t, p.client.buf[:len(serverText)], serverText)
	p.close(t)
}

package twohost_test

import (
	"context"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/cmtest"
	"github.com/purerdma/purerdma/internal/verbstest"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

var qpCap = uverbs.QPCap{MaxSendWR: 64, MaxRecvWR: 64, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 64}

// ctxT bounds a test's RDMA waits.
func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// memory registers size bytes in pd with every access, freed at the end
// of the test.
func memory(t *testing.T, pd *uverbs.PD, size int) ([]byte, *mr.MR) {
	t.Helper()
	return verbstest.Memory(t, pd, size, uverbs.LocalWrite|uverbs.RemoteWrite|uverbs.RemoteRead|uverbs.RemoteAtomic)
}

// listen has the server's listener wait on the wire address, and tells
// the client its port.
func (p *side) listen() *rdmacm.ID {
	p.t.Helper()
	l, a := cmtest.Listen(p.t, netip.MustParseAddr(p.Dev.Addr), rdmacm.TCP)
	p.send("listening", strconv.Itoa(int(a.Port())))
	return l
}

// dial waits for the server's port and dials it.
func (p *side) dial(ctx context.Context) *rdmacm.ID {
	p.t.Helper()
	return p.dialPort(ctx, p.recv("listening"))
}

// dialPort resolves the route to the server's port across the wire and
// creates the QP, ready to Connect. The ID is closed at the end of the
// test.
func (p *side) dialPort(ctx context.Context, portStr string) *rdmacm.ID {
	t := p.t
	t.Helper()
	port, err := strconv.Atoi(portStr)
	if err != nil {
		t.Fatal(err)
	}
	return cmtest.Dial(t, ctx, netip.AddrPortFrom(netip.MustParseAddr(p.Peer), uint16(port)), rdmacm.TCP, qpCap, 5*time.Second)
}

// connParam allows RDMA reads and atomics both ways; RetryCount 7 is
// what rping asks for. rxe takes a retry count of 7 as "retry forever",
// as the IB spec has it for RNR retries only: a peer that is gone is
// never reported. faultParam's finite counts end such retries.
var (
	connParam  = rdmacm.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7}
	faultParam = rdmacm.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 6, RNRRetryCount: 6}
)

// connect sets up one connection across the wire with the client's
// param (the retry counts in the client's request hold for both QPs);
// both sides return their established ID. The IDs are closed at the end
// of the test.
func (p *side) connect(ctx context.Context, param rdmacm.ConnParam) *rdmacm.ID {
	t := p.t
	t.Helper()
	var id *rdmacm.ID
	if p.Server() {
		l := p.listen()
		req, err := l.WaitEvent(ctx, rdmacm.EventConnectRequest)
		if err != nil {
			t.Fatal(err)
		}
		id = req.ID
		t.Cleanup(func() { id.Close() })
		if err := id.CreateQP(nil, uverbs.QPInit{Cap: qpCap}); err != nil {
			t.Fatal(err)
		}
		if err := id.Accept(&param); err != nil {
			t.Fatal(err)
		}
	} else {
		id = p.dial(ctx)
		if err := id.Connect(&param); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := id.WaitEvent(ctx, rdmacm.EventEstablished); err != nil {
		t.Fatalf("guest %s: %v", p.Name, err)
	}
	return id
}

// hangUp disconnects: the client first, the server answering, as rping
// does; each side waits for its DISCONNECTED event.
func (p *side) hangUp(ctx context.Context, id *rdmacm.ID) {
	t := p.t
	t.Helper()
	if !p.Server() {
		if err := id.Disconnect(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := id.WaitEvent(ctx, rdmacm.EventDisconnected); err != nil {
		t.Fatalf("guest %s: %v", p.Name, err)
	}
	if p.Server() {
		if err := id.Disconnect(); err != nil {
			t.Fatal(err)
		}
	}
}

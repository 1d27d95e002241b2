package twohost_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/rtnl"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// The fault tests: a streams messages to b while something goes wrong on
// the wire. Under loss and delay every message must still arrive intact
// (rxe retransmits); when b's link goes down or b loses power, a must
// see a failed completion, not hang. The host times each case between
// the marks the guests print (see docs/two-hosts.md for the figures).

// netem puts a netem qdisc on this guest's wire NIC until the end of the
// test.
func (p *side) netem(n rtnl.Netem) {
	t := p.t
	t.Helper()
	c, err := rtnl.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetNetem(p.Dev.Netdev, n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.DelRootQdisc(p.Dev.Netdev); err != nil {
			t.Errorf("removing netem: %v", err)
		}
	})
}

// TestNetem: loss and delay on a's NIC (its egress: a's data packets and
// its CM messages; b's ACKs arrive unharmed), set before the connection
// is made. -short sends 30 messages per case.
func TestNetem(t *testing.T) {
	tests := []struct {
		name  string
		netem rtnl.Netem
		n     int
	}{
		{"loss1", rtnl.Netem{Loss: 1}, 400},
		{"loss10", rtnl.Netem{Loss: 10}, 100},
		{"delay20ms", rtnl.Netem{Delay: 20 * time.Millisecond}, 100},
	}
	for _, tt := range tests {
		if testing.Short() {
			// At 10% loss a message of 4 packets takes about a second of
			// go-back-N retransmission under emulation.
			tt.n = min(tt.n, 30)
		}
		t.Run(tt.name, func(t *testing.T) {
			p := begin(t)
			ctx := ctxT(t, 5*time.Minute)
			if p.Server() {
				p.netem(tt.netem)
			}
			id := p.connect(ctx, connParam)
			if !p.Server() {
				got := recvStream(p, id, tt.n, nil)
				p.send("received", strconv.Itoa(got))
				p.hangUp(ctx, id)
				return
			}
			p.recv("ready")
			before := counters(p.Dev.Name)
			p.mark(tt.name+".start", "%d messages of %d bytes to guest %s, netem %+v", tt.n, msgSize, p.PeerName, tt.netem)
			start := time.Now()
			r := sendStream(p, id, tt.n)
			took := time.Since(start)
			p.mark(tt.name+".end", "%d of %d sends completed", r.completed, tt.n)
			if r.completed != tt.n {
				t.Fatalf("guest %s: %d of %d sends completed, then %+v", p.Name, r.completed, tt.n, r.errWC)
			}
			if got := p.recv("received"); got != strconv.Itoa(tt.n) {
				t.Errorf("guest %s received %s messages intact, want %d", p.PeerName, got, tt.n)
			}
			t.Logf("netem %+v: %d/%d messages of %d bytes completed and verified in %v (guest clock); rxe counters: %s",
				tt.netem, tt.n, tt.n, msgSize, took.Round(time.Millisecond), counterDiff(before, counters(p.Dev.Name)))
			p.hangUp(ctx, id)
		})
	}
}

// linkDownHold is how long b keeps its link down: long enough for a's
// six retries to run out (about 4 s of guest time with rdma_cm's RoCE
// ACK timeout), after which a must have seen the failure.
const linkDownHold = 30 * time.Second

// TestLinkDown: b sets its link down after a quarter of the stream; a,
// the survivor, must see its sends fail with retry-exceeded, and its
// disconnect must end with the DISCONNECTED event (answered by b once
// its link is back, or given up by a's IB CM).
func TestLinkDown(t *testing.T) {
	p := begin(t)
	ctx := ctxT(t, 5*time.Minute)
	id := p.connect(ctx, faultParam)
	const n, downAt = 400, 100
	if !p.Server() {
		c, err := rtnl.Dial()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		recvStream(p, id, n, func(got int) bool {
			if got < downAt {
				return true
			}
			p.mark("linkdown.start", "guest %s sets %s down after %d messages", p.Name, p.Dev.Netdev, got)
			if err := c.SetDown(p.Dev.Netdev); err != nil {
				t.Fatal(err)
			}
			return false
		})
		time.Sleep(linkDownHold)
		if err := c.SetUp(p.Dev.Netdev); err != nil {
			t.Fatal(err)
		}
		p.mark("linkup", "guest %s sets %s up again", p.Name, p.Dev.Netdev)
		t.Logf("guest %s: %s", p.Name, p.recv("result"))
		return
	}
	p.recv("ready")
	qp := retryAttrs(p, id)
	r := sendStream(p, id, n)
	p.mark("linkdown.end", "guest %s: send %d failed: %v", p.Name, r.errWC.ID, r.errWC.Status)
	res := survivor(p, r, n) + "; " + qp
	t.Log(res)
	disconnect(p, ctx, id, "linkdown-disconnect")
	p.send("result", res)
}

// survivor checks that a's stream ended in retry-exceeded before the end
// and describes it.
func survivor(p *side, r streamResult, n int) string {
	t := p.t
	t.Helper()
	if r.errWC.Status == cq.Success {
		t.Fatalf("guest %s: all %d sends completed, though guest %s was gone", p.Name, r.completed, p.PeerName)
	}
	if r.errWC.Status != cq.RetryExcErr {
		t.Errorf("guest %s: failed completion %+v, want %v", p.Name, r.errWC, cq.RetryExcErr)
	}
	return fmt.Sprintf("guest %s: %d of %d sends completed, then send %d failed with %v %v after the last success (guest clock)",
		p.Name, r.completed, n, r.errWC.ID, r.errWC.Status, r.errAt.Sub(r.lastOK).Round(time.Millisecond))
}

// retryAttrs checks that the server's QP took the retry count of the
// client's request, and describes its ACK timeout, which sets how long
// the retries take.
func retryAttrs(p *side, id *rdmacm.ID) string {
	t := p.t
	t.Helper()
	a, err := id.QP().Query(uverbs.QPAttrTimeout | uverbs.QPAttrRetryCnt)
	if err != nil {
		t.Fatal(err)
	}
	if a.RetryCnt != faultParam.RetryCount {
		t.Errorf("guest %s's QP has retry count %d, want the request's %d", p.Name, a.RetryCnt, faultParam.RetryCount)
	}
	ack := time.Duration(4096<<a.Timeout) * time.Nanosecond
	return fmt.Sprintf("QP ACK timeout %d (%v), retry count %d", a.Timeout, ack, a.RetryCnt)
}

// disconnect disconnects from a peer that may be gone, and waits for the
// DISCONNECTED event, timed on the host between the marks NAME.start and
// NAME.end.
func disconnect(p *side, ctx context.Context, id *rdmacm.ID, name string) {
	t := p.t
	t.Helper()
	start := time.Now()
	p.mark(name+".start", "guest %s disconnects", p.Name)
	if err := id.Disconnect(); err != nil {
		t.Fatal(err)
	}
	if _, err := id.WaitEvent(ctx, rdmacm.EventDisconnected); err != nil {
		t.Fatalf("guest %s: waiting for DISCONNECTED: %v", p.Name, err)
	}
	p.mark(name+".end", "guest %s got DISCONNECTED", p.Name)
	t.Logf("guest %s: DISCONNECTED %v after its disconnect (guest clock)", p.Name, time.Since(start).Round(time.Millisecond))
}

// TestPeerPowerOff: after a quarter of the stream, b has the host kill
// its QEMU, as a pulled plug; a must see its sends fail and get the
// DISCONNECTED event of its own disconnect, which b never answers. The
// harness runs it last, alone: b does not come back.
func TestPeerPowerOff(t *testing.T) {
	p := begin(t)
	ctx := ctxT(t, 5*time.Minute)
	id := p.connect(ctx, faultParam)
	const n, offAt = 400, 100
	if !p.Server() {
		recvStream(p, id, n, func(got int) bool { return got < offAt })
		fmt.Println(p.PowerOff)
		time.Sleep(2 * time.Minute)
		t.Fatalf("guest %s: asked the host to power it off 2 minutes ago, and still runs", p.Name)
	}
	p.recv("ready")
	qp := retryAttrs(p, id)
	r := sendStream(p, id, n)
	p.peerGone = true // no control connection any more
	p.mark("poweroff.end", "guest %s: send %d failed: %v", p.Name, r.errWC.ID, r.errWC.Status)
	t.Log(survivor(p, r, n) + "; " + qp)
	disconnect(p, ctx, id, "poweroff-disconnect")
}

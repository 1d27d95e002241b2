package faults_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/rpmatest"
	"github.com/purerdma/purerdma/rpma"
)

// streamDepth is how many operations a stream keeps in flight; the
// client's queues are sized for it.
const streamDepth = 16

// streamConfig is the client's config for a stream: its CQ holds every
// operation in flight.
func streamConfig() *rpma.ConnConfig {
	cfg := rpma.DefaultConnConfig()
	cfg.SQSize, cfg.CQSize = streamDepth, streamDepth
	return &cfg
}

// outcome is what a stream saw after its fault.
type outcome struct {
	ok       int               // successful completions after the fault
	stranded int               // operations that never completed (siw)
	doubled  int               // reads siw flushed twice (docs/faults.md)
	failed   map[cq.Status]int // failed completions, by status
	postErr  error             // the first failed post, if one did
	event    rpma.ConnEvent    // the connection's event, ConnUndefined if none came
	firstErr time.Duration     // from the fault to the first failed completion
	eventAt  time.Duration     // from the fault to the event
}

func (o outcome) String() string {
	return fmt.Sprintf("%d ok, failed %v, %d stranded, %d reads flushed twice, post error %v, first failure after %v, event %q after %v",
		o.ok, o.failed, o.stranded, o.doubled, o.postErr, o.firstErr, o.event, o.eventAt)
}

// stream keeps reads and writes of the peer's region in flight on c,
// calls fault once some have completed, and goes on until the fault
// shows (a failed completion, a failed post or a connection event) or
// as many have succeeded after it as before (the connection survived).
// Then it stops posting, calls hangUp once (which disconnects, as
// librpma's users do, so that the QP flushes what is left) and waits
// until every operation it posted has completed, each exactly once. It
// gives up after timeout. With strand (siw), operations still in flight
// strandWait after the last completion are counted as stranded, if they
// are the last posted: one missing before a later one that completed is
// a drop, and fails the test; and a read flushed twice in a row is
// counted, not failed (siw's flush, docs/faults.md).
func stream(t *testing.T, c *rpma.Conn, local *rpma.MR, remote *rpma.RemoteMR, fault, hangUp func(), strand bool, timeout time.Duration) outcome {
	t.Helper()
	const warm = 200 // completions before the fault
	ctx := ctxFor(t, timeout)
	evCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan rpma.ConnEvent, 1)
	go func() {
		ev, err := c.NextEvent(evCtx)
		if err != nil {
			ev = rpma.ConnUndefined
		}
		events <- ev
	}()
	o := outcome{failed: map[cq.Status]int{}, event: rpma.ConnUndefined}
	inFlight := map[uint64]bool{}
	var (
		next    uint64
		faultAt time.Time
		posting = true
		hungUp  bool
		done    int
		maxDone uint64    // the highest ID completed
		lastAt  time.Time // of the last completion
		wc      = make([]cq.WC, streamDepth)
		last    cq.WC // the previous completion
	)
	stop := func() {
		posting = false
		if !hungUp {
			hungUp = true
			hangUp()
			lastAt = time.Now() // hangUp may wait
		}
	}
	for {
		for posting && len(inFlight) < streamDepth {
			next++
			var err error
			if next%2 == 0 {
				err = c.Read(local, 0, remote, 0, 4096, rpma.Op{Flags: rpma.CompletionAlways, Context: next})
			} else {
				err = c.Write(remote, 4096, local, 4096, 4096, rpma.Op{Flags: rpma.CompletionAlways, Context: next})
			}
			if err != nil {
				o.postErr = err
				// A post whose doorbell failed has its request in the
				// ring already (siw's doorbell returns ENOTCONN once
				// the QP has left RTS): it is in flight and may still
				// complete, flushed, or stay stranded.
				if errors.Is(err, unix.ENOTCONN) {
					inFlight[next] = true
				}
				stop()
				break
			}
			inFlight[next] = true
		}
		n, err := c.CQ().GetWC(wc)
		if err != nil && !errors.Is(err, rpma.ErrNoCompletion) {
			t.Fatalf("GetWC: %v", err)
		}
		for _, w := range wc[:n] {
			prev := last
			last = w
			if !inFlight[w.ID] {
				// siw's flush completes a read twice
				// (rpmatest.FlushedTwice); reads have even IDs. Only that
				// shape is let through, and only on siw.
				if strand && w.ID%2 == 0 && rpmatest.FlushedTwice(prev, w) {
					o.doubled++
					continue
				}
				t.Fatalf("completion %+v of no operation in flight", w)
			}
			delete(inFlight, w.ID)
			done++
			maxDone = max(maxDone, w.ID)
			lastAt = time.Now()
			switch {
			case faultAt.IsZero():
				if w.Status != cq.Success {
					t.Fatalf("completion %+v before the fault", w)
				}
			case w.Status == cq.Success:
				o.ok++
			default:
				if len(o.failed) == 0 {
					o.firstErr = time.Since(faultAt)
				}
				o.failed[w.Status]++
				stop()
			}
		}
		if !faultAt.IsZero() && o.ok >= warm {
			// The connection survived the fault.
			stop()
		}
		if faultAt.IsZero() && done >= warm {
			fault()
			faultAt = time.Now()
		}
		select {
		case ev := <-events:
			o.event, o.eventAt = ev, time.Since(faultAt)
			stop()
		default:
		}
		if !posting && len(inFlight) == 0 {
			break
		}
		if strand && !posting && time.Since(lastAt) > strandWait {
			for id := range inFlight {
				// A read (even ID) may stay behind later writes that
				// completed: siw completes a write once it is sent but
				// a read only at its response, and a QP that goes to
				// ERROR without siw_sq_flush keeps the reads waiting
				// in its ORQ (docs/faults.md, "Stranded operations on
				// siw"). A write missing before a later completion is
				// a drop.
				if id < maxDone && id%2 != 0 {
					t.Fatalf("operation %d never completed, %d did (%v)", id, maxDone, o)
				}
			}
			o.stranded = len(inFlight)
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%d operations still in flight after %v (%v)", len(inFlight), timeout, o)
		}
		if n == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	if o.event == rpma.ConnUndefined {
		// The event may come after the flush.
		select {
		case ev := <-events:
			o.event, o.eventAt = ev, time.Since(faultAt)
		case <-time.After(5 * time.Second):
			cancel()
			if ev := <-events; ev != rpma.ConnUndefined {
				o.event, o.eventAt = ev, time.Since(faultAt)
			}
		}
	}
	return o
}

// disconnect returns a hangUp for stream that disconnects c.
func disconnect(t *testing.T, c *rpma.Conn) func() {
	return func() {
		if err := c.Disconnect(); err != nil {
			t.Logf("disconnect: %v", err)
		}
	}
}

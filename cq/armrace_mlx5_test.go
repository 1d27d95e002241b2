package cq

import (
	"errors"
	"sync"
	"testing"

	"github.com/purerdma/purerdma/internal/provider/conformance"
)

// TestReqNotifyRacesCloseMLX5: goroutines arm an mlx5 CQ (the doorbell
// record and the UAR's CQ doorbell), and its owner arms and polls it
// through its Poller, while another goroutine closes the CQ, its QP and
// the whole context, whose pages the fake device really unmaps. Every
// arm must succeed or return ErrClosed, none may fault, and the race
// detector must see no race (go test -race): the arm runs under the CQ's
// lock, or in the owner's gate, and Close takes the lock, which shuts the
// gate and waits for the owner to leave (docs/concurrency.md, Arming
// under the lock).
func TestReqNotifyRacesCloseMLX5(t *testing.T) {
	iters := 500
	if testing.Short() {
		iters = 20
	}
	for range iters {
		h := conformance.NewMLX5Host(t, conformance.Setup{Provider: "mlx5", SQ: 4, RQ: 4, CQ: 4, MaxSendSGE: 1, MaxRecvSGE: 1})
		c := mlx5CQ(h.CQ)
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, 5)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for {
					err := c.ReqNotify(false)
					if errors.Is(err, ErrClosed) {
						return
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		// The owner arms (and polls) without the lock meanwhile: Close's
		// lock shuts it out and waits for it to leave.
		p, err := c.Own()
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			wc := make([]WC, 1)
			for {
				err := p.ReqNotify(true)
				if err == nil {
					_, err = p.Poll(wc)
				}
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
		close(start)
		// As a context's Close: the QP, then the CQ (what CQ.release
		// does under the CQ's lock), then the driver's context, which
		// unmaps the UARs.
		h.Queues.SQ.Close()
		h.Queues.RQ.Close()
		c.life.Release(c.closeRing)
		if err := h.Ctx.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if err := c.ReqNotify(true); !errors.Is(err, ErrClosed) {
			t.Fatalf("ReqNotify after Close: %v", err)
		}
	}
}

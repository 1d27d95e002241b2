package cq

import (
	"errors"
	"sync"
	"testing"

	"github.com/purerdma/purerdma/internal/provider/conformance"
)

// TestReqNotifyRacesCloseMLX5: goroutines arm an mlx5 CQ (the doorbell
// record and the UAR's CQ doorbell) while another closes the CQ, its QP
// and the whole context, whose pages the fake device really unmaps. Every
// ReqNotify must succeed or return ErrClosed, none may fault, and the race
// detector must see no race (go test -race): the arm runs under the CQ's
// lock, which Close takes (docs/concurrency.md, Arming under the lock).
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
		errs := make(chan error, 4)
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

package uverbs_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/uverbs"
)

// TestCloseRacesDataPath closes the objects, or their context, while
// goroutines post sends on one QP, receives on the other and poll the CQ
// they share: every goroutine must end with ErrClosed, none may crash or
// hang, and nothing may leak (the leak check).
//
// With owners, the send side of one QP, the receive side of the other
// and the CQ's polling belong to goroutines that post and poll without
// the locks (SendQueue, RecvQueue, Poller), beside a goroutine that takes
// the lock: Close must wait for the owners to leave, and every one of
// them must still end with ErrClosed.
func TestCloseRacesDataPath(t *testing.T) {
	d := testenv.RoCE(t)
	for _, tt := range []struct {
		name  string
		close func(r *rig, a, b *uverbs.QP) error
		owned bool
	}{
		{"objects", func(r *rig, a, b *uverbs.QP) error { return errors.Join(a.Close(), b.Close(), r.cq.Close()) }, false},
		{"context", func(r *rig, _, _ *uverbs.QP) error { return r.ctx.Close() }, false},
		{"objects/owned", func(r *rig, a, b *uverbs.QP) error { return errors.Join(a.Close(), b.Close(), r.cq.Close()) }, true},
		{"context/owned", func(r *rig, _, _ *uverbs.QP) error { return r.ctx.Close() }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, a, b := rcPair(t, d)
			send := []uverbs.SendWR{{Opcode: uverbs.WRRDMAWrite, Flags: uverbs.SendSignaled,
				SGE: []uverbs.SGE{r.sge(0, 8)}, RemoteAddr: r.mr.Addr() + 64, RKey: r.mr.RKey()}}
			recv := []uverbs.RecvWR{{SGE: []uverbs.SGE{r.sge(128, 8)}}}
			ops := []func() error{
				func() error { _, err := a.PostSend(send); return err },
				func() error { _, err := a.PostSend(send); return err },
				func() error { _, err := b.PostRecv(recv); return err },
				func() error { _, err := r.cq.Poll(make([]cq.WC, 4)); return err },
			}
			if tt.owned {
				sq, rq, p := owners(t, a, b, r.cq)
				ops[0] = func() error { _, err := sq.Post(send); return err }
				ops[2] = func() error { _, err := rq.Post(recv); return err }
				ops = append(ops, func() error { _, err := p.Poll(make([]cq.WC, 4)); return err })
			}
			ended := make(chan error, len(ops))
			var wg sync.WaitGroup
			for _, op := range ops {
				wg.Go(func() { ended <- untilClosed(op) })
			}
			time.Sleep(100 * time.Millisecond) // let them run; the test holds either way
			if err := tt.close(r, a, b); err != nil {
				t.Fatalf("close while in use: %v", err)
			}
			for range ops {
				select {
				case err := <-ended:
					if err != nil {
						t.Error(err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("an operation did not end after Close")
				}
			}
			wg.Wait()
		})
	}
}

// untilClosed runs op until it returns ErrClosed, and returns nil then, or
// op's first other error; a full queue is not one.
func untilClosed(op func() error) error {
	for {
		switch err := op(); {
		case errors.Is(err, uverbs.ErrClosed):
			return nil
		case err != nil && !errors.Is(err, uverbs.ErrQueueFull):
			return err
		}
	}
}

// owners takes a's send side, b's receive side and c's polling.
func owners(t *testing.T, a, b *uverbs.QP, c *cq.CQ) (*uverbs.SendQueue, *uverbs.RecvQueue, *cq.Poller) {
	t.Helper()
	sq, err := a.OwnSend()
	if err != nil {
		t.Fatalf("OwnSend: %v", err)
	}
	rq, err := b.OwnRecv()
	if err != nil {
		t.Fatalf("OwnRecv: %v", err)
	}
	p, err := c.Own()
	if err != nil {
		t.Fatalf("Own: %v", err)
	}
	return sq, rq, p
}

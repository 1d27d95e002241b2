package uverbs_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/internal/verbstest"
	"github.com/purerdma/purerdma/uverbs"
)

// TestCQResizeUnderLoad resizes the CQ of a connection again and again
// while 3000 signaled RDMA writes run through it, at most 16 in flight,
// taken with Completions loops cut short at 5: every wr_id completes
// once, successfully and in order, across the resizes (rxe copies the
// completions not yet consumed into the new ring).
func TestCQResizeUnderLoad(t *testing.T) {
	testenv.CheckLeaks(t)
	d := testenv.RoCE(t)
	r, a, _ := rcPair(t, d)
	const total, inflight = 3000, 16
	var stop atomic.Bool
	var resizes atomic.Int64
	var wg sync.WaitGroup
	var resizeErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		sizes := []int{20, 300, 40, 100, 17, 64}
		for i := 0; !stop.Load(); i++ {
			n := sizes[i%len(sizes)]
			if err := r.cq.Resize(n); err != nil {
				resizeErr = err
				return
			}
			if got := r.cq.CQE(); got < n {
				resizeErr = errors.New("CQE below the size asked for")
				return
			}
			resizes.Add(1)
			time.Sleep(200 * time.Microsecond)
		}
	}()
	next, posted := uint64(1), uint64(0)
	deadline := time.Now().Add(60 * time.Second)
	for next <= total {
		for posted < total && posted-(next-1) < inflight {
			posted++
			_, err := a.PostSend([]uverbs.SendWR{{ID: posted, Opcode: uverbs.WRRDMAWrite, Flags: uverbs.SendSignaled,
				SGE: []uverbs.SGE{r.sge(0, 8)}, RemoteAddr: r.mr.Addr() + 64, RKey: r.mr.RKey()}})
			if err != nil {
				stop.Store(true)
				wg.Wait()
				t.Fatalf("PostSend %d: %v", posted, err)
			}
		}
		for wc, err := range r.cq.Completions(5) {
			if err == nil && (wc.ID != next || wc.Status != cq.Success) {
				err = errors.New("out of order or failed")
			}
			if err != nil {
				stop.Store(true)
				wg.Wait()
				t.Fatalf("completion %+v, want id %d: %v", wc, next, err)
			}
			next++
		}
		if time.Now().After(deadline) {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("%d of %d completions after 60s", next-1, total)
		}
	}
	stop.Store(true)
	wg.Wait()
	if resizeErr != nil {
		t.Fatalf("Resize: %v", resizeErr)
	}
	var extra [1]cq.WC
	if n, _ := r.cq.Poll(extra[:]); n != 0 {
		t.Errorf("extra completion %+v", extra[0])
	}
	if resizes.Load() < 10 {
		t.Errorf("%d resizes during the run, want 10 at least", resizes.Load())
	}
	t.Logf("%d writes completed across %d resizes", total, resizes.Load())
}

// TestCQResizeLimits: rxe keeps completions across a resize and refuses a
// size below what the CQ holds or past the device's maximum; siw cannot
// resize and says so with EOPNOTSUPP. A hardware device is asked to keep
// the completions and refuse the size past its maximum.
func TestCQResizeLimits(t *testing.T) {
	testenv.CheckLeaks(t)
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		r := newRig(t, d)
		if d.Driver == "siw" {
			err := r.cq.Resize(128)
			if !errors.Is(err, syscall.EOPNOTSUPP) {
				t.Fatalf("siw Resize = %v, want EOPNOTSUPP", err)
			}
			t.Logf("siw: %v", err)
			return
		}
		qp := r.qp(t, uverbs.RC, nil)
		if err := qp.Init(1, rigAccess); err != nil {
			t.Fatalf("Init: %v", err)
		}
		for i := range 10 {
			if _, err := qp.PostRecv([]uverbs.RecvWR{{ID: uint64(i + 1)}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := qp.Modify(&uverbs.QPAttr{State: uverbs.QPSErr}, uverbs.QPAttrState); err != nil {
			t.Fatal(err)
		}
		// Take the first to know the flush began, and give the other 9
		// time to land: rxe flushes from its responder task.
		if wc, err := verbstest.PollOne(r.cq); err != nil || wc.ID != 1 {
			t.Fatalf("first flushed receive: %+v, %v", wc, err)
		}
		time.Sleep(100 * time.Millisecond)
		attr, err := r.ctx.QueryDevice()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			cqe  int
			soft bool // rxe's refusal: a device may take it (the provider copies what fits)
		}{{"below the completions held", 8, true}, {"past the device's maximum", attr.MaxCQE + 1, false}} {
			if c.soft && d.Hardware() {
				t.Logf("%s: Resize %s not tried: the refusal is rxe's", d, c.name)
				continue
			}
			if err := r.cq.Resize(c.cqe); !errors.Is(err, uverbs.ErrInvalid) {
				t.Errorf("Resize %s (%d) = %v, want ErrInvalid", c.name, c.cqe, err)
			}
		}
		if err := r.cq.Resize(200); err != nil || r.cq.CQE() < 200 {
			t.Fatalf("Resize(200) = %v, CQE %d", err, r.cq.CQE())
		}
		if err := r.cq.Resize(9); err != nil || r.cq.CQE() < 9 {
			t.Fatalf("Resize(9) with 9 held = %v, CQE %d", err, r.cq.CQE())
		}
		wc := r.poll(t, 9)
		for i, w := range wc {
			if w.ID != uint64(i+2) || w.Status != cq.WRFlushErr {
				t.Errorf("completion %d after the resizes: %+v, want id %d flushed", i, w, i+2)
			}
		}
	})
}

package uverbs

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/conformance"
	"github.com/purerdma/purerdma/internal/provider/mlx5"
)

// failRQ is a driver outside this module (PostRecv copies each request
// for it) that refuses the request after full puts and fails to publish
// when flushErr is set.
type failRQ struct {
	puts, full int
	flushErr   error
}

func (r *failRQ) Put(wr *provider.RecvWR) error {
	if r.puts == r.full {
		return provider.ErrFull
	}
	r.puts++
	return nil
}
func (r *failRQ) Flush() error { return r.flushErr }
func (r *failRQ) Close() error { return nil }

// TestPostRecvErrors: PostRecv's refusals on each driver's path, through
// the lock and through the owner: uverbs' SGE limit (here 2, below the
// drivers' 4) reported as uverbs' own whichever path checked it, a
// driver's refusal and a foreign driver's failure to publish named with
// the request, the requests before posted.
func TestPostRecvErrors(t *testing.T) {
	sge := make([]SGE, 3)
	mlx5QP := func(tb testing.TB) (*QP, *conformance.FakeDevice, func(), func()) {
		qp, _ := hostQPMLX5(tb)
		return qp, nil, func() {}, func() {}
	}
	foreign := func(full int, flushErr error) hostQPFunc {
		return func(tb testing.TB) (*QP, *conformance.FakeDevice, func(), func()) {
			qp, dev, takeSQ, takeRQ := hostQP(tb)
			qp.recv.setRQ(&failRQ{full: full, flushErr: flushErr})
			return qp, dev, takeSQ, takeRQ
		}
	}
	for _, c := range []struct {
		name string
		mk   hostQPFunc
		wrs  []RecvWR
		n    int
		is   error
		msg  []string
	}{
		{"rxe SGEs", hostQP, []RecvWR{{SGE: sge[:2]}, {SGE: sge}, {SGE: sge[:1]}}, 1, ErrInvalid,
			[]string{"post recv: work request 1: 3 SGEs, the queue takes 2"}},
		{"siw SGEs", hostQPSiw, []RecvWR{{SGE: sge}}, 0, ErrInvalid,
			[]string{"post recv: work request 0: 3 SGEs, the queue takes 2"}},
		{"mlx5 SGEs", mlx5QP, []RecvWR{{SGE: sge[:1]}, {SGE: sge[:1]}, {SGE: sge}}, 2, ErrInvalid,
			[]string{"post recv: work request 2: 3 SGEs, the queue takes 2"}},
		{"foreign SGEs", foreign(9, nil), []RecvWR{{SGE: sge[:1]}, {SGE: sge}}, 1, ErrInvalid,
			[]string{"post recv: work request 1: 3 SGEs, the queue takes 2"}},
		{"foreign full", foreign(1, nil), []RecvWR{{SGE: sge[:1]}, {SGE: sge[:1]}}, 1, ErrQueueFull,
			[]string{"post recv: work request 1: receive queue of"}},
		{"foreign flush", foreign(1, provider.ErrInvalid), []RecvWR{{SGE: sge[:1]}, {SGE: sge[:1]}}, 1, ErrQueueFull,
			[]string{"post recv: work request 1: receive queue of", "post recv: invalid argument"}},
	} {
		for _, owned := range []bool{false, true} {
			qp, _, _, _ := c.mk(t)
			qp.recv.sge = qp.recv.sge[:2]
			var n int
			var err error
			if owned {
				rq, oerr := qp.OwnRecv()
				if oerr != nil {
					t.Fatal(oerr)
				}
				n, err = rq.Post(c.wrs)
				rq.Release()
			} else {
				n, err = qp.PostRecv(c.wrs)
			}
			ok := n == c.n && errors.Is(err, c.is)
			for _, m := range c.msg {
				ok = ok && strings.Contains(err.Error(), m)
			}
			if !ok {
				t.Errorf("%s (owned %v): posted %d, %v; want %d and %v saying %q", c.name, owned, n, err, c.n, c.is, c.msg)
			}
		}
	}
}

// TestRecvQueueRefuses: the owner's Post says why a QP takes no receive
// work as PostRecv does, and a released or nil RecvQueue is closed.
func TestRecvQueueRefuses(t *testing.T) {
	qp, _, _, _ := hostQP(t)
	rq, err := qp.OwnRecv()
	if err != nil {
		t.Fatal(err)
	}
	wrs := []RecvWR{{SGE: hostSGE}}
	qp.setState(QPSReset)
	if n, err := rq.Post(wrs); n != 0 || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "RESET") {
		t.Errorf("owned post in RESET: %d, %v; want 0 and ErrInvalid naming RESET", n, err)
	}
	if n, err := qp.PostRecv(wrs); n != 0 || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "RESET") {
		t.Errorf("post in RESET: %d, %v; want 0 and ErrInvalid naming RESET", n, err)
	}
	qp.setState(QPSInit)
	if n, err := rq.Post(wrs); n != 1 || err != nil {
		t.Errorf("owned post in INIT: %d, %v", n, err)
	}
	rq.Release()
	if n, err := rq.Post(wrs); n != 0 || !errors.Is(err, ErrClosed) {
		t.Errorf("post on a released RecvQueue: %d, %v; want ErrClosed", n, err)
	}
	var none *RecvQueue
	if n, err := none.Post(wrs); n != 0 || !errors.Is(err, ErrClosed) {
		t.Errorf("post on a nil RecvQueue: %d, %v; want ErrClosed", n, err)
	}
	if n, err := qp.PostRecv(wrs); n != 1 || err != nil {
		t.Errorf("PostRecv after the release: %d, %v", n, err)
	}
}

// TestSRQPostRecvMLX5: an SRQ on mlx5 posts through the driver's batch
// (its own type, not the receive queue's) without allocating, and
// reports uverbs' SGE limit and a full SRQ as PostRecv does.
func TestSRQPostRecvMLX5(t *testing.T) {
	_, h := hostQPMLX5(t)
	init := provider.SRQInit{MaxWR: 4, MaxSGE: 2}
	in, out := h.Ctx.Udata(abi.IB_USER_VERBS_CMD_CREATE_SRQ)
	p, err := h.Ctx.CreateSRQ(&init, make([]byte, in))
	if err != nil {
		t.Fatal(err)
	}
	rq, err := p.Finish(make([]byte, out))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rq.(*mlx5.SRQ); !ok {
		t.Fatalf("mlx5's SRQ is a %T", rq)
	}
	s := &SRQ{recv: recvSide{sge: make([]provider.SGE, 1), size: int(init.MaxWR)}}
	s.recv.setRQ(rq)
	t.Cleanup(func() { rq.Close() })
	sge := []SGE{{Addr: 0x10000, Length: 64, LKey: 0x55}, {Addr: 0x20000, Length: 64, LKey: 0x55}}
	allocs := testing.AllocsPerRun(3, func() {
		wrs := [1]RecvWR{{ID: 1, SGE: sge[:1]}}
		if n, err := s.PostRecv(wrs[:]); n != 1 || err != nil {
			t.Fatal(n, err)
		}
	})
	if allocs != 0 {
		t.Errorf("SRQ.PostRecv allocates %v times", allocs)
	}
	// 4 posted of 7 (AllocsPerRun's warm-up included). The next two
	// find the lock held (postRecvSlow) and must post and say as the
	// one-CAS way does, then leave the lock free.
	held := func() {
		t.Helper()
		if !s.mu.TryLockFree() {
			t.Fatal("the SRQ's lock is left held")
		}
		go func() {
			time.Sleep(time.Millisecond)
			s.mu.Unlock()
		}()
	}
	held()
	n, err := s.PostRecv([]RecvWR{{SGE: sge[:1]}, {SGE: sge}})
	if n != 1 || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "work request 1: 2 SGEs, the queue takes 1") {
		t.Errorf("2 SGEs of 1: posted %d, %v", n, err)
	}
	held()
	n, err = s.PostRecv([]RecvWR{{SGE: sge[:1]}, {SGE: sge[:1]}, {SGE: sge[:1]}})
	if n != 2 || !errors.Is(err, ErrQueueFull) || !strings.Contains(err.Error(), "work request 2:") {
		t.Errorf("past the 7 WQEs: posted %d, %v", n, err)
	}
	if !s.mu.TryLockFree() {
		t.Fatal("the SRQ's lock is left held")
	}
	s.mu.UnlockFree()
}

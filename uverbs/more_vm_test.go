package uverbs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/internal/verbstest"
	"github.com/purerdma/purerdma/uverbs"
)

// TestQPLifecycle creates the objects on every device, rxe and siw, and
// walks a QP from RESET to INIT and ERR, checking what Query reports.
func TestQPLifecycle(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		r := newRig(t, d)
		srq, err := r.pd.CreateSRQ(uverbs.SRQInit{MaxWR: 8, MaxSGE: 2})
		if err != nil {
			t.Fatalf("CreateSRQ: %v", err)
		}
		qp := r.qp(t, uverbs.RC, nil)
		sqp := r.qp(t, uverbs.RC, srq)
		if c := qp.Cap(); c.MaxSendWR < 16 || c.MaxRecvWR < 16 || c.MaxSendSGE < 4 || c.MaxRecvSGE < 4 {
			t.Errorf("granted %+v, less than asked", c)
		}
		attr, err := qp.Query(uverbs.QPAttrState | uverbs.QPAttrCap)
		if err != nil {
			t.Fatal(err)
		}
		// siw has no RESET state of its own: Linux 6.1's siw_query_qp
		// leaves the state unset (0, RESET), 6.12's reports siw's IDLE
		// as INIT.
		wantState := uverbs.QPSReset
		if d.Driver == "siw" && testenv.KernelAtLeast(6, 12) {
			wantState = uverbs.QPSInit
		}
		if attr.State != wantState {
			t.Errorf("new QP in %s, want %s", attr.State, wantState)
		}
		if _, err := qp.PostRecv([]uverbs.RecvWR{{ID: 1, SGE: []uverbs.SGE{r.sge(0, 8)}}}); !errors.Is(err, uverbs.ErrInvalid) {
			t.Errorf("PostRecv in RESET: %v, want ErrInvalid", err)
		}
		init := uverbs.QPAttr{State: uverbs.QPSInit, Port: 1, Access: rigAccess}
		mask := uverbs.QPAttrState | uverbs.QPAttrPKeyIndex | uverbs.QPAttrPort | uverbs.QPAttrAccessFlags
		for _, q := range []*uverbs.QP{qp, sqp} {
			if err := q.Modify(&init, mask); err != nil {
				t.Fatalf("Modify to INIT: %v", err)
			}
		}
		if attr, err = qp.Query(uverbs.QPAttrState | uverbs.QPAttrPort | uverbs.QPAttrAccessFlags); err != nil {
			t.Fatal(err)
		}
		// siw_query_qp reports neither the state (Linux 6.1; 6.12 reports
		// INIT already) nor the port, and always the same access flags.
		if d.Driver == "siw" {
			attr.State, attr.Port, attr.Access = uverbs.QPSInit, 1, rigAccess
		}
		if attr.State != uverbs.QPSInit || attr.Port != 1 || attr.Access != rigAccess {
			t.Errorf("after INIT: state %s port %d access %#x", attr.State, attr.Port, attr.Access)
		}
		if n, err := qp.PostRecv([]uverbs.RecvWR{{ID: 1, SGE: []uverbs.SGE{r.sge(0, 8)}}, {ID: 2}}); n != 2 || err != nil {
			t.Errorf("PostRecv in INIT: %d, %v", n, err)
		}
		if n, err := srq.PostRecv([]uverbs.RecvWR{{ID: 3, SGE: []uverbs.SGE{r.sge(0, 8), r.sge(8, 8)}}}); n != 1 || err != nil {
			t.Errorf("SRQ PostRecv: %d, %v", n, err)
		}
		if _, err := sqp.PostRecv([]uverbs.RecvWR{{ID: 4}}); !errors.Is(err, uverbs.ErrInvalid) {
			t.Errorf("PostRecv on a QP with an SRQ: %v, want ErrInvalid", err)
		}
		// A skipped state is the kernel's EINVAL.
		err = qp.Modify(&uverbs.QPAttr{State: uverbs.QPSRTS}, uverbs.QPAttrState)
		if !errors.Is(err, uverbs.ErrInvalid) || !errors.Is(err, errnoByName["EINVAL"]) {
			t.Errorf("INIT to RTS: %v, want ErrInvalid", err)
		}
		if err := srq.Close(); !errors.Is(err, uverbs.ErrBusy) {
			t.Errorf("closing an SRQ in use: %v, want ErrBusy", err)
		}
		// ERR flushes the posted receives.
		if err := qp.Modify(&uverbs.QPAttr{State: uverbs.QPSErr}, uverbs.QPAttrState); err != nil {
			t.Fatal(err)
		}
		got := verbstest.SortWC(r.poll(t, 2))
		want := []cq.WC{{ID: 1, Status: cq.WRFlushErr, QPNum: qp.Num()}, {ID: 2, Status: cq.WRFlushErr, QPNum: qp.Num()}}
		if d.Hardware() {
			got = verbstest.Defined(got, false) // VendorErr is the device's
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("flushed receives (-want +got):\n%s", diff)
		}
		if err := sqp.Close(); err != nil {
			t.Fatal(err)
		}
		if err := srq.Close(); err != nil {
			t.Errorf("SRQ close after its QP: %v", err)
		}
	})
}

// TestCompletionChannel arms a CQ, waits on its channel and checks that
// Wait honours its context.
func TestCompletionChannel(t *testing.T) {
	d := testenv.RoCE(t)
	r, a, _ := rcPair(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := r.cq.ReqNotify(false); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ch.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with nothing to wait for: %v, want DeadlineExceeded", err)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, ccancel)
	if _, err := r.ch.Wait(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait cancelled: %v, want Canceled", err)
	}
	copy(r.buf, "ping")
	if _, err := a.PostSend([]uverbs.SendWR{{ID: 9, Opcode: uverbs.WRRDMAWrite, Flags: uverbs.SendSignaled,
		SGE: []uverbs.SGE{r.sge(0, 4)}, RemoteAddr: r.mr.Addr() + offB, RKey: r.mr.RKey()}}); err != nil {
		t.Fatal(err)
	}
	got, err := r.ch.Wait(waitCtx(t))
	if err != nil || got != r.cq {
		t.Fatalf("Wait = %v, %v; want the CQ", got, err)
	}
	if r.cq.Events() != 1 {
		t.Errorf("Events() = %d, want 1", r.cq.Events())
	}
	if wc := r.poll(t, 1); wc[0].ID != 9 || wc[0].Status != cq.Success {
		t.Errorf("completion after the event: %+v", wc[0])
	}
	// Again through the CQ's owner, which arms and polls without the
	// lock where the driver arms in user space, and through the kernel
	// (REQ_NOTIFY_CQ) where it does not.
	p, err := r.cq.Own()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	if err := p.ReqNotify(false); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PostSend([]uverbs.SendWR{{ID: 10, Opcode: uverbs.WRRDMAWrite, Flags: uverbs.SendSignaled,
		SGE: []uverbs.SGE{r.sge(0, 4)}, RemoteAddr: r.mr.Addr() + offB, RKey: r.mr.RKey()}}); err != nil {
		t.Fatal(err)
	}
	if got, err := r.ch.Wait(waitCtx(t)); err != nil || got != r.cq {
		t.Fatalf("Wait after the owner's arm = %v, %v; want the CQ", got, err)
	}
	if r.cq.Events() != 2 {
		t.Errorf("Events() = %d, want 2", r.cq.Events())
	}
	var wc [1]cq.WC
	if n, err := p.Poll(wc[:]); n != 1 || err != nil || wc[0].ID != 10 || wc[0].Status != cq.Success {
		t.Errorf("the owner's poll after the event: %d, %v, %+v", n, err, wc[0])
	}
}

// TestSRQLimitEvent receives through an SRQ and checks the async event
// its limit raises.
func TestSRQLimitEvent(t *testing.T) {
	d := testenv.RoCE(t)
	r := newRig(t, d)
	srq, err := r.pd.CreateSRQ(uverbs.SRQInit{MaxWR: 8, MaxSGE: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// After the QPs, which are created later and so cleaned up first.
		if err := srq.Close(); err != nil {
			t.Errorf("SRQ close: %v", err)
		}
	})
	a, b := r.qp(t, uverbs.RC, nil), r.qp(t, uverbs.RC, srq)
	r.connect(t, a, b.Num())
	r.connect(t, b, a.Num())
	recvs := make([]uverbs.RecvWR, 4)
	for i := range recvs {
		recvs[i] = uverbs.RecvWR{ID: uint64(100 + i), SGE: []uverbs.SGE{r.sge(offB+64*i, 64)}}
	}
	if n, err := srq.PostRecv(recvs); n != 4 || err != nil {
		t.Fatalf("SRQ PostRecv: %d, %v", n, err)
	}
	if err := srq.SetLimit(3); err != nil {
		t.Fatal(err)
	}
	if l, err := srq.Limit(); l != 3 || err != nil {
		t.Errorf("Limit() = %d, %v; want 3", l, err)
	}
	copy(r.buf, "hi")
	sends := []uverbs.SendWR{{ID: 1, Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{r.sge(0, 2)}},
		{ID: 2, Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{r.sge(0, 2)}}}
	if _, err := a.PostSend(sends); err != nil {
		t.Fatal(err)
	}
	got := verbstest.SortWC(r.poll(t, 4))
	want := []cq.WC{
		{ID: 1, Opcode: cq.OpSend, ByteLen: 2, QPNum: a.Num()},
		{ID: 2, Opcode: cq.OpSend, ByteLen: 2, QPNum: a.Num()},
		{ID: 100, Opcode: cq.OpRecv, ByteLen: 2, QPNum: b.Num(), Flags: grh},
		{ID: 101, Opcode: cq.OpRecv, ByteLen: 2, QPNum: b.Num(), Flags: grh},
	}
	if d.Hardware() {
		want, got = verbstest.Defined(want, false), verbstest.Defined(got, false)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("completions (-want +got):\n%s", diff)
	}
	ev, err := r.ctx.AsyncEvent(waitCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != uverbs.EventSRQLimitReached || ev.SRQ != srq {
		t.Errorf("async event %v, want SRQ limit reached on SRQ %d", ev, srq.Num())
	}
	// The event disarmed the limit.
	if l, err := srq.Limit(); l != 0 || err != nil {
		t.Errorf("Limit() after the event = %d, %v; want 0", l, err)
	}
}

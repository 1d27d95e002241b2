package rdmacm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/internal/verbstest"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// connected returns an established active and passive ID on d with QPs
// of qpCap, allowing reads RDMA reads outstanding each way.
func connected(t *testing.T, d testenv.Dev, qpCap uverbs.QPCap, reads uint8) (active, passive *rdmacm.ID) {
	t.Helper()
	ctx := ctxT(t)
	l, addr := listen(t, d, rdmacm.TCP)
	c := dialer(t, addr, rdmacm.TCP, qpCap)
	if err := c.Connect(&rdmacm.ConnParam{ResponderResources: reads, InitiatorDepth: reads, RetryCount: 7, RNRRetryCount: 7}); err != nil {
		t.Fatal(err)
	}
	req, err := l.WaitEvent(ctx, rdmacm.EventConnectRequest)
	if err != nil {
		t.Fatal(err)
	}
	s := req.ID
	if err := s.CreateQP(nil, uverbs.QPInit{Cap: qpCap}); err != nil {
		t.Fatal(err)
	}
	if err := s.Accept(&rdmacm.ConnParam{ResponderResources: reads, InitiatorDepth: reads}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitEvent(ctx, rdmacm.EventEstablished); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WaitEvent(ctx, rdmacm.EventEstablished); err != nil {
		t.Fatal(err)
	}
	return c, s
}

// TestGetRecvComp checks rdma_get_recv_comp's semantics from its man
// page: it blocks until a receive completes, returns exactly one
// completion, and the context given to rdma_post_recv comes back as the
// completion's wr_id. Send completions go to the other CQ.
func TestGetRecvComp(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		c, s := connected(t, d, qpCap, 1)
		t.Cleanup(func() { hangUp(t, c, s) })
		sbuf, sregion := memory(t, s.PD())
		cbuf, cregion := memory(t, c.PD())
		for i := range 2 {
			if err := s.PostRecv(uint64(0xc0de0+i), sregion, 64*i, 64); err != nil {
				t.Fatal(err)
			}
		}
		type result struct {
			wc  cq.WC
			err error
		}
		got := make(chan result, 1)
		go func() {
			wc, err := s.GetRecvComp(ctxT(t))
			got <- result{wc, err}
		}()
		select {
		case r := <-got:
			t.Fatalf("GetRecvComp returned %+v, %v before anything was sent", r.wc, r.err)
		case <-time.After(100 * time.Millisecond):
		}
		copy(cbuf, "first")
		if err := c.PostSend(1, cregion, 0, 5, uverbs.SendSignaled); err != nil {
			t.Fatal(err)
		}
		r := <-got
		if r.err != nil {
			t.Fatal(r.err)
		}
		want := cq.WC{ID: 0xc0de0, Opcode: cq.OpRecv, ByteLen: 5, QPNum: s.QP().Num()}
		if d.Driver == "rxe" {
			want.Flags = cq.GRH // see docs/kernel-notes.md
		}
		wc := r.wc
		if d.Hardware() {
			wc = verbstest.Defined([]cq.WC{wc}, false)[0]
		}
		if diff := cmp.Diff(want, wc); diff != "" {
			t.Errorf("receive completion (-want +got):\n%s", diff)
		}
		if string(sbuf[:5]) != "first" {
			t.Errorf("received %q", sbuf[:5])
		}
		// The send's completion is on the send CQ, not the receive CQ.
		if wc, err := c.GetSendComp(ctxT(t)); err != nil || wc.ID != 1 || wc.Opcode != cq.OpSend {
			t.Errorf("send completion %+v, %v", wc, err)
		}
		// Nothing more to receive: the wait ends with its context.
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if _, err := s.GetRecvComp(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("GetRecvComp with nothing to receive: %v, want DeadlineExceeded", err)
		}
	})
}

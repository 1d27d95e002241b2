package uverbs_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/uverbs"
)

// TestOwners moves data through the owner handles: sends with immediate
// data from a's SendQueue into receives posted through b's RecvQueue,
// completions through the CQ's Poller; every completion and every byte
// checked. Then what ownership refuses and allows: a second owner
// (ErrBusy), the locked calls beside the owner (correct, slower), Modify
// from another goroutine, Release and a new owner, and the handles after
// Close (ErrClosed).
func TestOwners(t *testing.T) {
	d := testenv.RoCE(t)
	r, a, b := rcPair(t, d)
	sq, rq, p := owners(t, a, b, r.cq)

	const rounds, size = 200, 32
	wc := make([]cq.WC, 4)
	for i := range rounds {
		src := r.buf[:size]
		for j := range src {
			src[j] = byte(i + j)
		}
		clear(r.buf[1024 : 1024+size])
		if n, err := rq.Post([]uverbs.RecvWR{{ID: uint64(i), SGE: []uverbs.SGE{r.sge(1024, size)}}}); n != 1 || err != nil {
			t.Fatalf("round %d: RecvQueue.Post = %d, %v", i, n, err)
		}
		if n, err := sq.Post([]uverbs.SendWR{{ID: uint64(i), Opcode: uverbs.WRSendWithImm, Flags: uverbs.SendSignaled,
			Imm: uint32(i), SGE: []uverbs.SGE{r.sge(0, size)}}}); n != 1 || err != nil {
			t.Fatalf("round %d: SendQueue.Post = %d, %v", i, n, err)
		}
		var sent, received bool
		for !sent || !received {
			n, err := p.Poll(wc)
			if err != nil {
				t.Fatalf("round %d: Poller.Poll: %v", i, err)
			}
			for _, w := range wc[:n] {
				if w.Status != cq.Success || w.ID != uint64(i) {
					t.Fatalf("round %d: completion %+v", i, w)
				}
				switch w.Opcode {
				case cq.OpSend:
					sent = true
				case cq.OpRecv:
					received = true
					if w.Imm != uint32(i) || w.ByteLen != size {
						t.Fatalf("round %d: receive %+v", i, w)
					}
				default:
					t.Fatalf("round %d: completion %+v", i, w)
				}
			}
		}
		if !bytes.Equal(r.buf[1024:1024+size], r.buf[:size]) {
			t.Fatalf("round %d: received % x, sent % x", i, r.buf[1024:1024+size], r.buf[:size])
		}
	}

	if _, err := a.OwnSend(); !errors.Is(err, uverbs.ErrBusy) {
		t.Errorf("a second OwnSend: %v, want ErrBusy", err)
	}
	if _, err := r.cq.Own(); !errors.Is(err, uverbs.ErrBusy) {
		t.Errorf("a second CQ.Own: %v, want ErrBusy", err)
	}
	// The locked way beside the owners: a write, polled by CQ.Poll.
	if n, err := a.PostSend([]uverbs.SendWR{{ID: 7, Opcode: uverbs.WRRDMAWrite, Flags: uverbs.SendSignaled,
		SGE: []uverbs.SGE{r.sge(0, 8)}, RemoteAddr: r.mr.Addr() + 2048, RKey: r.mr.RKey()}}); n != 1 || err != nil {
		t.Fatalf("PostSend beside the owner = %d, %v", n, err)
	}
	if got := r.poll(t, 1); got[0].ID != 7 || got[0].Status != cq.Success {
		t.Fatalf("the locked write's completion %+v", got[0])
	}
	// Modify from another goroutine: it takes the send lock, which
	// shuts the owner's gate, and tells the driver the new state.
	done := make(chan error)
	go func() { done <- a.Modify(&uverbs.QPAttr{State: uverbs.QPSErr}, uverbs.QPAttrState) }()
	if err := <-done; err != nil {
		t.Fatalf("Modify to ERR beside the owner: %v", err)
	}

	if n, err := sq.Post([]uverbs.SendWR{{ID: 8, Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled,
		SGE: []uverbs.SGE{r.sge(0, 8)}}}); n != 1 || err != nil {
		t.Fatalf("SendQueue.Post in ERR = %d, %v", n, err)
	}
	if got := r.poll(t, 1); got[0].ID != 8 || got[0].Status != cq.WRFlushErr {
		t.Fatalf("a send posted by the owner in ERR: %+v, want a flush error", got[0])
	}
	sq.Release()
	if _, err := sq.Post(nil); !errors.Is(err, uverbs.ErrClosed) {
		t.Errorf("SendQueue.Post after Release: %v, want ErrClosed", err)
	}
	sq2, err := a.OwnSend()
	if err != nil {
		t.Fatalf("OwnSend after Release: %v", err)
	}
	p.Release()
	if _, err := p.Poll(wc); !errors.Is(err, cq.ErrClosed) {
		t.Errorf("Poller.Poll after Release: %v, want ErrClosed", err)
	}

	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := rq.Post([]uverbs.RecvWR{{SGE: []uverbs.SGE{r.sge(1024, 8)}}}); !errors.Is(err, uverbs.ErrClosed) {
		t.Errorf("RecvQueue.Post after Close: %v, want ErrClosed", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sq2.Post([]uverbs.SendWR{{Opcode: uverbs.WRSend}}); !errors.Is(err, uverbs.ErrClosed) {
		t.Errorf("SendQueue.Post after Close: %v, want ErrClosed", err)
	}
	if _, err := a.OwnSend(); !errors.Is(err, uverbs.ErrClosed) {
		t.Errorf("OwnSend after Close: %v, want ErrClosed", err)
	}
}

package cq

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider/conformance"
	"github.com/purerdma/purerdma/internal/provider/mem"
	"github.com/purerdma/purerdma/internal/provider/rxe"
	"github.com/purerdma/purerdma/internal/provider/siw"
)

// iterRing is a CQ on a real provider over a Go ring, with the fake
// kernel's side: put writes the next completion, back tells how many of
// those put the consumer has handed back to the kernel.
type iterRing struct {
	c    *CQ
	put  func(id uint64, status, opcode, byteLen uint32)
	back func() int
}

// newIterRxe is an rxe CQ of 16 slots.
func newIterRxe(t *testing.T) *iterRing {
	c, _, _ := hostCQ(t) // only for the driver lookup and the mapping
	const log2, slots = 6, 16
	buf := conformance.RxeRing(log2, slots)
	dev := &conformance.FakeDevice{Maps: map[uint64][]byte{1 << 12: buf}}
	var resp [16]byte
	mem.At[abi.MMInfo](resp[:], 0).Offset = 1 << 12
	mem.At[abi.MMInfo](resp[:], 0).Size = uint32(len(buf))
	ring, err := conformance.CreateCQ(rxe.Driver(), dev, resp[:])
	if err != nil {
		t.Fatal(err)
	}
	c.ring, c.drv = ring, driversOf(ring)
	prod := conformance.RxeIndex(buf, true)
	cons := conformance.RxeIndex(buf, false)
	return &iterRing{
		c: c,
		put: func(id uint64, status, opcode, byteLen uint32) {
			p := prod.Load()
			*mem.At[abi.WC](buf, 384+int(p)<<log2) = abi.WC{WrID: id, Status: status, Opcode: opcode, ByteLen: byteLen, QPNum: 0x11, VendorErr: status}
			prod.Store((p + 1) % slots)
		},
		back: func() int { return int(cons.Load()) },
	}
}

// newIterSiw is a siw CQ of 16 elements.
func newIterSiw(t *testing.T) *iterRing {
	c, _, _ := hostCQSiw(t)
	const n = 16
	buf := make([]byte, n*32+8)
	dev := &conformance.FakeDevice{Maps: map[uint64][]byte{1 << 12: buf}}
	var resp [16]byte // struct siw_uresp_create_cq: cq_id, num_cqe, cq_key
	resp[0], resp[4], resp[9] = 2, n, 1<<12>>8
	ring, err := conformance.CreateCQ(siw.Driver(), dev, resp[:])
	if err != nil {
		t.Fatal(err)
	}
	c.ring, c.drv = ring, driversOf(ring)
	next, puts := 0, 0
	siwOp := map[uint32]uint8{abi.IB_WC_RDMA_WRITE: abi.SIW_OP_WRITE, abi.IB_WC_RECV: abi.SIW_OP_RECEIVE, abi.IB_WC_SEND: abi.SIW_OP_SEND}
	siwStatus := map[uint32]uint16{abi.IB_WC_SUCCESS: abi.SIW_WC_SUCCESS, abi.IB_WC_WR_FLUSH_ERR: abi.SIW_WC_WR_FLUSH_ERR}
	return &iterRing{
		c: c,
		put: func(id uint64, status, opcode, byteLen uint32) {
			*mem.At[abi.SiwCQE](buf, next*32) = abi.SiwCQE{ID: id, Flags: abi.SIW_WQE_VALID, Opcode: siwOp[opcode],
				Status: siwStatus[status], Bytes: byteLen, QPID: 0x11}
			next, puts = (next+1)%n, puts+1
		},
		back: func() int {
			valid := 0
			for i := range n {
				if buf[i*32+8]&abi.SIW_WQE_VALID != 0 {
					valid++
				}
			}
			return puts - valid
		},
	}
}

var iterRings = []struct {
	name string
	mk   func(*testing.T) *iterRing
}{{"rxe", newIterRxe}, {"siw", newIterSiw}}

// putSome writes the same mix of completions into r: receives, writes
// and a flushed receive.
func putSome(r *iterRing, n int) {
	for i := range n {
		switch i % 3 {
		case 0:
			r.put(uint64(100+i), abi.IB_WC_SUCCESS, abi.IB_WC_RECV, uint32(i))
		case 1:
			r.put(uint64(100+i), abi.IB_WC_SUCCESS, abi.IB_WC_RDMA_WRITE, 8)
		default:
			r.put(uint64(100+i), abi.IB_WC_WR_FLUSH_ERR, abi.IB_WC_RECV, 0)
		}
	}
}

// collect ranges over c.Completions(max).
func collect(t *testing.T, c *CQ, max int) []WC {
	t.Helper()
	var got []WC
	for wc, err := range c.Completions(max) {
		if err != nil {
			t.Fatalf("Completions(%d): %v", max, err)
		}
		got = append(got, wc)
	}
	return got
}

// TestCompletionsLikePoll: the iterator yields what Poll returns, in
// the same order, and ends at the empty CQ.
func TestCompletionsLikePoll(t *testing.T) {
	for _, rr := range iterRings {
		t.Run(rr.name, func(t *testing.T) {
			a, b := rr.mk(t), rr.mk(t)
			putSome(a, 10)
			putSome(b, 10)
			wc := make([]WC, 16)
			n, err := a.c.Poll(wc)
			if err != nil || n != 10 {
				t.Fatalf("Poll = %d, %v; want 10", n, err)
			}
			got := collect(t, b.c, 64)
			if diff := cmp.Diff(wc[:n], got); diff != "" {
				t.Errorf("Completions differ from Poll (-poll +iter):\n%s", diff)
			}
			if got[2].Status != WRFlushErr || got[2].ID != 102 || got[3].Opcode != OpRecv || got[3].ByteLen != 3 {
				t.Errorf("completions 2, 3 = %+v, %+v", got[2], got[3])
			}
			if back := b.back(); back != 10 {
				t.Errorf("%d slots handed back after the loop, want 10", back)
			}
			if got := collect(t, b.c, 64); len(got) != 0 {
				t.Errorf("second loop on the empty CQ yielded %d", len(got))
			}
		})
	}
}

// TestCompletionsBreak: a break hands back the completions yielded and
// leaves the rest in the ring; on rxe the consumer index moves once, at
// the end of the loop.
func TestCompletionsBreak(t *testing.T) {
	for _, rr := range iterRings {
		t.Run(rr.name, func(t *testing.T) {
			r := rr.mk(t)
			putSome(r, 5)
			var ids []uint64
			for wc, err := range r.c.Completions(64) {
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, wc.ID)
				if rr.name == "rxe" && r.back() != 0 {
					t.Errorf("consumer index %d inside the loop, want 0 until its end", r.back())
				}
				if len(ids) == 2 {
					break
				}
			}
			if diff := cmp.Diff([]uint64{100, 101}, ids); diff != "" {
				t.Errorf("ids before the break (-want +got):\n%s", diff)
			}
			if back := r.back(); back != 2 {
				t.Errorf("%d slots handed back after the break, want 2", back)
			}
			wc := make([]WC, 8)
			n, err := r.c.Poll(wc)
			if err != nil || n != 3 || wc[0].ID != 102 || wc[1].ID != 103 || wc[2].ID != 104 {
				t.Errorf("Poll after the break = %d, %v, %+v; want 102, 103, 104", n, err, wc[:n])
			}
		})
	}
}

// TestCompletionsMax: at most max are yielded, the rest stay.
func TestCompletionsMax(t *testing.T) {
	for _, rr := range iterRings {
		t.Run(rr.name, func(t *testing.T) {
			r := rr.mk(t)
			putSome(r, 5)
			if got := collect(t, r.c, 3); len(got) != 3 || got[2].ID != 102 {
				t.Fatalf("Completions(3) = %+v", got)
			}
			if back := r.back(); back != 3 {
				t.Errorf("%d slots handed back, want 3", back)
			}
			if got := collect(t, r.c, 3); len(got) != 2 || got[0].ID != 103 || got[1].ID != 104 {
				t.Errorf("second Completions(3) = %+v", got)
			}
		})
	}
}

// TestCompletionsReentrant: the loop body may poll the same CQ (the CQ is
// not locked while it runs), and a close in the body ends the loop with
// ErrClosed.
func TestCompletionsReentrant(t *testing.T) {
	for _, rr := range iterRings {
		t.Run(rr.name, func(t *testing.T) {
			r := rr.mk(t)
			putSome(r, 4)
			var ids []uint64
			var last error
			for wc, err := range r.c.Completions(64) {
				if err != nil {
					last = err
					break
				}
				ids = append(ids, wc.ID)
				if wc.ID == 100 {
					var w [1]WC
					if n, err := r.c.Poll(w[:]); n != 1 || err != nil || w[0].ID != 101 {
						t.Errorf("Poll in the loop = %d, %v, %+v", n, err, w[0])
					}
				}
				if wc.ID == 102 {
					r.c.life.Release(r.c.closeRing) // what Close does, without a device
				}
			}
			if diff := cmp.Diff([]uint64{100, 102}, ids); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if !errors.Is(last, ErrClosed) {
				t.Errorf("after the close in the loop: %v, want ErrClosed", last)
			}
		})
	}
}

// TestCompletionsAllocs: neither the iterator nor the loop allocates.
func TestCompletionsAllocs(t *testing.T) {
	for _, rr := range iterRings {
		t.Run(rr.name, func(t *testing.T) {
			r := rr.mk(t)
			var sum uint64
			allocs := testing.AllocsPerRun(100, func() {
				putSome(r, 3)
				for wc, err := range r.c.Completions(8) {
					if err != nil {
						panic(err)
					}
					sum += wc.ID
				}
			})
			if allocs != 0 {
				t.Errorf("Completions allocates %v times per loop", allocs)
			}
			// AllocsPerRun runs the function once more than asked.
			if want := uint64(101 * (100 + 101 + 102)); sum != want {
				t.Errorf("sum of ids %d, want %d", sum, want)
			}
		})
	}
}

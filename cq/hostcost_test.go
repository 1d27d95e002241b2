package cq

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/purerdma/purerdma/internal/provider/conformance"
	"github.com/purerdma/purerdma/internal/provider/siw"
)

// The poll rows of the host cost table (make bench-host,
// docs/benchmarks-host.md): CQ.Poll through the real rxe provider over a
// Go ring of conformance.BenchSetup's size, against ibv_poll_cq through
// rdma-core's librxe over the harness's ring. Every slot holds a receive
// with immediate data; when a poll finds fewer than it asked for, the fake
// kernel makes the ring full again and the poll takes the rest.

// hostCQ is a CQ on the rxe provider over a Go ring, with the fake
// kernel's fill (once) and refill (when a poll finds fewer than it asked).
func hostCQ(tb testing.TB) (*CQ, func(), func()) {
	tb.Helper()
	buf := conformance.RxeRing(6, conformance.BenchSetup.CQ)
	return rxeCQOn(tb, buf), func() { conformance.RxeFillCQ(buf) }, func() { conformance.RxeRefillCQ(buf) }
}

// hostCQSiw is hostCQ on siw: 1024 siw_cqe and the siw_cq_ctrl word.
func hostCQSiw(tb testing.TB) (*CQ, func(), func()) {
	tb.Helper()
	n := int(conformance.SiwBenchSetup.CQ)
	buf := make([]byte, n*32+8)
	dev := &conformance.FakeDevice{Maps: map[uint64][]byte{1 << 12: buf}}
	var resp [16]byte // struct siw_uresp_create_cq: cq_id, num_cqe, cq_key
	binary.NativeEndian.PutUint32(resp[0:], 2)
	binary.NativeEndian.PutUint32(resp[4:], uint32(n))
	binary.NativeEndian.PutUint64(resp[8:], 1<<12)
	ring, err := conformance.CreateCQ(siw.Driver(), dev, resp[:])
	if err != nil {
		tb.Fatal(err)
	}
	return onRing(ring), func() { conformance.SiwFillCQ(buf, n) }, func() { conformance.SiwRefillCQ(buf, n) }
}

type hostCQFunc func(testing.TB) (*CQ, func(), func())

// hostPolls is the CQ the rows poll, and its owner for the rows'
// "-owned" variants.
type hostPolls struct {
	c *CQ
	p *Poller // nil unless owned
}

func hostPollsOf(tb testing.TB, c *CQ, owned bool) hostPolls {
	if !owned {
		return hostPolls{c: c}
	}
	p, err := c.Own()
	if err != nil {
		tb.Fatal(err)
	}
	return hostPolls{c: c, p: p}
}

// loop is hostLoopPoll, or hostLoopPollOwned for the owner.
func (h hostPolls) loop(wc []WC, want, calls int) error {
	if h.p != nil {
		return hostLoopPollOwned(h.p, wc, want, calls)
	}
	return hostLoopPoll(h.c, wc, want, calls)
}

func hostPoll(mk hostCQFunc, imm uint32, n int, owned bool) func(b *testing.B) {
	return func(b *testing.B) {
		c, fill, refill := mk(b)
		h := hostPollsOf(b, c, owned)
		fill()
		wc := make([]WC, n)
		b.ReportAllocs()
		for b.Loop() {
			var got int
			var err error
			if h.p != nil {
				got, err = h.p.Poll(wc)
			} else {
				got, err = c.Poll(wc)
			}
			if err != nil {
				b.Fatal(err)
			}
			if got < n {
				refill()
				if k, _ := c.Poll(wc[got:]); k != n-got {
					b.Fatal("poll after refill")
				}
			}
		}
		if wc[0].ID != 9 || wc[0].Imm != imm {
			b.Fatalf("completion %+v", wc[0])
		}
	}
}

func hostPollEmpty(mk hostCQFunc, owned bool) func(b *testing.B) {
	return func(b *testing.B) {
		c, _, _ := mk(b)
		h := hostPollsOf(b, c, owned)
		wc := make([]WC, 1)
		b.ReportAllocs()
		for b.Loop() {
			var n int
			var err error
			if h.p != nil {
				n, err = h.p.Poll(wc)
			} else {
				n, err = c.Poll(wc)
			}
			if n != 0 || err != nil {
				b.Fatal(n, err)
			}
		}
	}
}

// hostLoopPoll polls wc calls times, each finding want completions: the
// instructions the host cost table counts (conformance.CostRow.Loop; the
// harnesses' hostloop_poll).
//
//go:noinline
func hostLoopPoll(c *CQ, wc []WC, want, calls int) error {
	for range calls {
		if n, err := c.Poll(wc); n != want || err != nil {
			return errors.Join(conformance.ErrShort, err)
		}
	}
	return nil
}

// hostLoopPollOwned is hostLoopPoll through the CQ's owner.
//
//go:noinline
func hostLoopPollOwned(p *Poller, wc []WC, want, calls int) error {
	for range calls {
		if n, err := p.Poll(wc); n != want || err != nil {
			return errors.Join(conformance.ErrShort, err)
		}
	}
	return nil
}

// hostCountPoll runs ops polls of k completions (k 0: of one on an empty
// CQ), the kernel making the CQ full again between the calls of
// hostLoopPoll, each as many polls as a full CQ answers: ring slots
// completions (rxe's ring holds one less than its slots).
func hostCountPoll(mk hostCQFunc, k, slots int, owned bool) func(testing.TB, int) {
	return func(tb testing.TB, ops int) {
		c, fill, refill := mk(tb)
		h := hostPollsOf(tb, c, owned)
		wc := make([]WC, max(k, 1))
		chunk := ops
		if k > 0 {
			fill()
			chunk = slots / k
		} else {
			refill = nil
		}
		conformance.Chunks(tb, ops, chunk, func(n int) error { return h.loop(wc, k, n) }, refill)
	}
}

// pollRows are a driver's poll rows: timed by goRow(k, owned) and counted
// by count(k, owned) for polls of k completions (k 0: of one on an empty
// CQ), through CQ.Poll and, for pollempty and poll1, through the CQ's
// owner (compared with the same C rows: C has no lock-free handle that is
// safe).
func pollRows(goRow func(k int, owned bool) func(*testing.B), count func(k int, owned bool) func(testing.TB, int)) []conformance.CostRow {
	return []conformance.CostRow{
		{Name: "pollempty", What: "poll an empty CQ (one busy-wait turn)", Iters: 10000000,
			Go: goRow(0, false), Count: count(0, false), Loop: hostLoopPoll},
		{Name: "poll1", What: "poll 1 completion", Iters: 2000000,
			Go: goRow(1, false), Count: count(1, false), Loop: hostLoopPoll},
		{Name: "poll16", What: "poll 16 completions", Iters: 500000,
			Go: goRow(16, false), Count: count(16, false), Loop: hostLoopPoll},
		{Name: "pollempty-owned", C: "pollempty", What: "pollempty through the CQ's Poller (no lock)", Iters: 10000000,
			Go: goRow(0, true), Count: count(0, true), Loop: hostLoopPollOwned},
		{Name: "poll1-owned", C: "poll1", What: "poll1 through the CQ's Poller (no lock)", Iters: 2000000,
			Go: goRow(1, true), Count: count(1, true), Loop: hostLoopPollOwned},
	}
}

// ringPollRows are pollRows on the rings mk makes (rxe, siw), whose
// completions carry imm, a full CQ answering slots completions.
func ringPollRows(mk hostCQFunc, imm uint32, slots int) []conformance.CostRow {
	goRow := func(k int, owned bool) func(*testing.B) {
		if k == 0 {
			return hostPollEmpty(mk, owned)
		}
		return hostPoll(mk, imm, k, owned)
	}
	return pollRows(goRow, func(k int, owned bool) func(testing.TB, int) { return hostCountPoll(mk, k, slots, owned) })
}

func TestHostCostPoll(t *testing.T) {
	cqe := int(conformance.BenchSetup.CQ) - 1
	conformance.HostCost(t, conformance.BenchSetup, ringPollRows(hostCQ, 0x01020304, cqe), 5)
}

// TestHostCostPollSiw is the same on siw (receives without immediate
// data, siw has none).
func TestHostCostPollSiw(t *testing.T) {
	cqe := int(conformance.SiwBenchSetup.CQ)
	conformance.HostCost(t, conformance.SiwBenchSetup, ringPollRows(hostCQSiw, 0, cqe), 5)
}

// The rows as benchmarks, for profiling: go test -bench HostPoll ./cq.
func BenchmarkHostPoll16(b *testing.B)         { hostPoll(hostCQ, 0x01020304, 16, false)(b) }
func BenchmarkHostPoll1(b *testing.B)          { hostPoll(hostCQ, 0x01020304, 1, false)(b) }
func BenchmarkHostPollEmpty(b *testing.B)      { hostPollEmpty(hostCQ, false)(b) }
func BenchmarkHostPoll1Owned(b *testing.B)     { hostPoll(hostCQ, 0x01020304, 1, true)(b) }
func BenchmarkHostPollEmptyOwned(b *testing.B) { hostPollEmpty(hostCQ, true)(b) }

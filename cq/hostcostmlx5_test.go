package cq

import (
	"testing"

	"github.com/purerdma/purerdma/internal/provider/conformance"
)

// The mlx5 poll and arm rows of the host cost table: CQ.Poll and
// ReqNotify through the real mlx5 provider (conformance.MLX5Host: its CQ
// and QP made through one provider.Context with the mlx5 harness's
// answers) against ibv_poll_cq and ibv_req_notify_cq through rdma-core's
// libmlx5 (the mlx5 harness's bench command). The receive queue is full of
// receives with ID 9; when the CQ holds fewer completions than a poll asks
// for, the device writes receive-with-immediate CQEs into the whole ring,
// off the clock (conformance.Pause), on both sides.

func hostPollMLX5(k int, owned bool) func(b *testing.B) {
	return func(b *testing.B) {
		h := conformance.NewMLX5Host(b, conformance.MLX5BenchSetup)
		h.FillRQ()
		c := onRing(h.CQ)
		o := hostPollsOf(b, c, owned)
		// pollempty (k 0) asks for one, as ibv_poll_cq(cq, 1, wc) does:
		// a poll of none would not reach the provider.
		wc := make([]WC, max(k, 1))
		avail := uint32(0)
		var p conformance.Pause
		fill := func() { h.Fill(h.Entries - avail) }
		b.ReportAllocs()
		for b.Loop() {
			if avail < uint32(k) {
				p.Run(fill)
				avail = h.Entries
			}
			var n int
			var err error
			if o.p != nil {
				n, err = o.p.Poll(wc)
			} else {
				n, err = c.Poll(wc)
			}
			if n != k || err != nil {
				b.Fatal(n, err)
			}
			avail -= uint32(k)
		}
		p.Report(b)
		if k > 0 && (wc[0].ID != 9 || wc[0].Imm != 0x01020304 || wc[0].ByteLen != 4096) {
			b.Fatalf("completion %+v", wc[0])
		}
	}
}

// hostArmMLX5 times the arm row: CQ.ReqNotify, or the Poller's.
func hostArmMLX5(owned bool) func(b *testing.B) {
	return func(b *testing.B) {
		c := mlx5CQ(conformance.NewMLX5Host(b, conformance.MLX5BenchSetup).CQ)
		o := hostPollsOf(b, c, owned)
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if o.p != nil {
				err = o.p.ReqNotify(false)
			} else {
				err = c.ReqNotify(false)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// hostCountPollMLX5 runs ops polls of k completions (k 0: of one on an
// empty CQ), the device filling the whole CQ between the calls of
// hostLoopPoll, each as many polls as a full CQ answers, as the harness's
// count command does.
func hostCountPollMLX5(k int, owned bool) func(testing.TB, int) {
	return func(tb testing.TB, ops int) {
		h := conformance.NewMLX5Host(tb, conformance.MLX5BenchSetup)
		h.FillRQ()
		o := hostPollsOf(tb, onRing(h.CQ), owned)
		wc := make([]WC, max(k, 1))
		if k == 0 {
			conformance.Chunks(tb, ops, ops, func(n int) error { return o.loop(wc, 0, n) }, nil)
			return
		}
		avail := uint32(0)
		chunk := int(h.Entries) / k
		conformance.Chunks(tb, ops, chunk, func(n int) error {
			h.Fill(h.Entries - avail)
			avail = h.Entries - uint32(n*k)
			return o.loop(wc, k, n)
		}, nil)
	}
}

// hostLoopArm arms the CQ calls times.
//
//go:noinline
func hostLoopArm(c *CQ, calls int) error {
	for range calls {
		if err := c.ReqNotify(false); err != nil {
			return err
		}
	}
	return nil
}

// hostLoopArmOwned is hostLoopArm through the CQ's owner.
//
//go:noinline
func hostLoopArmOwned(p *Poller, calls int) error {
	for range calls {
		if err := p.ReqNotify(false); err != nil {
			return err
		}
	}
	return nil
}

func hostCountArmMLX5(owned bool) func(testing.TB, int) {
	return func(tb testing.TB, ops int) {
		c := mlx5CQ(conformance.NewMLX5Host(tb, conformance.MLX5BenchSetup).CQ)
		o := hostPollsOf(tb, c, owned)
		conformance.Chunks(tb, ops, ops, func(n int) error {
			if o.p != nil {
				return hostLoopArmOwned(o.p, n)
			}
			return hostLoopArm(c, n)
		}, nil)
	}
}

func TestHostCostPollMLX5(t *testing.T) {
	rows := append(pollRows(hostPollMLX5, hostCountPollMLX5), conformance.CostRow{
		Name: "arm", What: "arm the CQ (doorbell record + UAR doorbell)", Iters: 10000000,
		Go: hostArmMLX5(false), Count: hostCountArmMLX5(false), Loop: hostLoopArm,
	}, conformance.CostRow{
		Name: "arm-owned", C: "arm", What: "arm through the CQ's Poller (no lock)", Iters: 10000000,
		Go: hostArmMLX5(true), Count: hostCountArmMLX5(true), Loop: hostLoopArmOwned,
	})
	conformance.HostCost(t, conformance.MLX5BenchSetup, rows, 5)
}

// The mlx5 rows as benchmarks, for profiling: go test -bench HostMLX5 ./cq.
func BenchmarkHostMLX5PollEmpty(b *testing.B)      { hostPollMLX5(0, false)(b) }
func BenchmarkHostMLX5Poll1(b *testing.B)          { hostPollMLX5(1, false)(b) }
func BenchmarkHostMLX5Poll16(b *testing.B)         { hostPollMLX5(16, false)(b) }
func BenchmarkHostMLX5Arm(b *testing.B)            { hostArmMLX5(false)(b) }
func BenchmarkHostMLX5ArmOwned(b *testing.B)       { hostArmMLX5(true)(b) }
func BenchmarkHostMLX5PollEmptyOwned(b *testing.B) { hostPollMLX5(0, true)(b) }
func BenchmarkHostMLX5Poll1Owned(b *testing.B)     { hostPollMLX5(1, true)(b) }

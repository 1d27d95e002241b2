package uverbs

import (
	"testing"

	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/conformance"
)

// The mlx5 send and receive rows of the host cost table: PostSend and
// PostRecv through the real mlx5 provider, its queues made through one
// provider.Context with the mlx5 harness's answers (conformance.MLX5Host),
// against ibv_post_send and ibv_post_recv through rdma-core's libmlx5
// (the mlx5 harness's bench command). Every conformance.MLX5BenchChunk
// requests the QP is restarted (RESET to RTS) with the timer stopped, on
// both sides: only completions hand WQEs back to an mlx5 queue.

// hostQPMLX5 is a QP in RTS on the mlx5 provider's queues.
func hostQPMLX5(tb testing.TB) (*QP, *conformance.MLX5Host) {
	tb.Helper()
	u := conformance.MLX5BenchSetup
	h := conformance.NewMLX5Host(tb, u)
	qp := &QP{typ: RC, sq: h.Queues.SQ, rq: h.Queues.RQ,
		cap:  QPCap{MaxSendWR: int(u.SQ), MaxRecvWR: int(u.RQ), MaxSendSGE: 4, MaxRecvSGE: 4, MaxInlineData: 64},
		ssge: make([]provider.SGE, 4), rsge: make([]provider.SGE, 4)}
	qp.state.Store(uint32(QPSRTS))
	qp.setNoReads(false)
	return qp, h
}

func hostSendMLX5(n int) func(b *testing.B) {
	return func(b *testing.B) {
		qp, h := hostQPMLX5(b)
		wrs := hostSendWRs(n)
		b.ReportAllocs()
		posts := 0
		for i := 0; b.Loop(); i++ {
			wrs[0].ID = uint64(i)
			if k, err := qp.PostSend(wrs); k != n || err != nil {
				b.Fatal(k, err)
			}
			posts += n
			if posts%conformance.MLX5BenchChunk == 0 {
				b.StopTimer()
				h.Restart()
				b.StartTimer()
			}
		}
	}
}

func hostRecvMLX5(b *testing.B) {
	qp, h := hostQPMLX5(b)
	wrs := []RecvWR{{ID: 9, SGE: hostSGE}}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		wrs[0].ID = uint64(i)
		if k, err := qp.PostRecv(wrs); k != 1 || err != nil {
			b.Fatal(k, err)
		}
		if i%conformance.MLX5BenchChunk == conformance.MLX5BenchChunk-1 {
			b.StopTimer()
			h.Restart()
			b.StartTimer()
		}
	}
}

// hostCountSendMLX5 runs ops calls of hostLoopSend with n requests each,
// the QP restarted every conformance.MLX5BenchChunk requests between
// them, as the harness's count command does.
func hostCountSendMLX5(n int) func(testing.TB, int) {
	return func(tb testing.TB, ops int) {
		qp, h := hostQPMLX5(tb)
		wrs := hostSendWRs(n)
		conformance.Chunks(tb, ops, conformance.MLX5BenchChunk/n, func(c int) error { return hostLoopSend(qp, wrs, c) }, h.Restart)
	}
}

// hostCountRecvMLX5 is hostCountSendMLX5 for receives.
func hostCountRecvMLX5(tb testing.TB, ops int) {
	qp, h := hostQPMLX5(tb)
	wrs := []RecvWR{{ID: 9, SGE: hostSGE}}
	conformance.Chunks(tb, ops, conformance.MLX5BenchChunk, func(c int) error { return hostLoopRecv(qp, wrs, c) }, h.Restart)
}

func TestHostCostPostMLX5(t *testing.T) {
	conformance.HostCost(t, conformance.MLX5BenchSetup, []conformance.CostRow{
		{Name: "send1", What: "post one send (RDMA write, 1 SGE, signaled) + doorbell", Iters: 2000000,
			Go: hostSendMLX5(1), Count: hostCountSendMLX5(1), Loop: hostLoopSend},
		{Name: "send16", What: "post 16 sends in one call, one doorbell", Iters: 200000,
			Go: hostSendMLX5(16), Count: hostCountSendMLX5(16), Loop: hostLoopSend},
		{Name: "recv1", What: "post one receive (1 SGE) + doorbell record", Iters: 2000000,
			Go: hostRecvMLX5, Count: hostCountRecvMLX5, Loop: hostLoopRecv},
	}, 5)
}

// The mlx5 rows as benchmarks, for profiling: go test -bench HostMLX5 ./uverbs.
func BenchmarkHostMLX5Send1(b *testing.B)  { hostSendMLX5(1)(b) }
func BenchmarkHostMLX5Send16(b *testing.B) { hostSendMLX5(16)(b) }
func BenchmarkHostMLX5Recv1(b *testing.B)  { hostRecvMLX5(b) }

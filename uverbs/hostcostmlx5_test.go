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
// requests the QP is restarted (RESET to RTS) off the clock
// (conformance.Pause), on both sides: only completions hand WQEs back to an mlx5 queue.

// hostQPMLX5 is a QP in RTS on the mlx5 provider's queues.
func hostQPMLX5(tb testing.TB) (*QP, *conformance.MLX5Host) {
	tb.Helper()
	u := conformance.MLX5BenchSetup
	h := conformance.NewMLX5Host(tb, u)
	qp := &QP{typ: RC, recv: recvSide{sge: make([]provider.SGE, 4), size: int(u.RQ)},
		cap:  QPCap{MaxSendWR: int(u.SQ), MaxRecvWR: int(u.RQ), MaxSendSGE: 4, MaxRecvSGE: 4, MaxInlineData: 64},
		ssge: make([]provider.SGE, 4)}
	qp.setSQ(h.Queues.SQ)
	qp.recv.setRQ(h.Queues.RQ)
	qp.state.Store(uint32(QPSRTS))
	qp.setNoReads(false)
	return qp, h
}

// hostPosterMLX5 is hostQPMLX5 for the post rows: the kernel's turn
// restarts the QP, every conformance.MLX5BenchChunk requests, off the
// clock (both sides keep it off).
func hostPosterMLX5(tb testing.TB) hostPoster {
	qp, h := hostQPMLX5(tb)
	return hostPoster{qp: qp, takeSQ: h.Restart, takeRQ: h.Restart, chunk: conformance.MLX5BenchChunk, stop: true}
}

func TestHostCostPostMLX5(t *testing.T) {
	conformance.HostCost(t, conformance.MLX5BenchSetup, postRows(hostPosterMLX5,
		"post one send (RDMA write, 1 SGE, signaled) + doorbell", "post 16 sends in one call, one doorbell",
		"post one receive (1 SGE) + doorbell record"), 5)
}

// The mlx5 rows as benchmarks, for profiling: go test -bench HostMLX5 ./uverbs.
func BenchmarkHostMLX5Send1(b *testing.B)      { hostSend(hostPosterMLX5, 1, false)(b) }
func BenchmarkHostMLX5Send16(b *testing.B)     { hostSend(hostPosterMLX5, 16, false)(b) }
func BenchmarkHostMLX5Recv1(b *testing.B)      { hostRecv(hostPosterMLX5, false)(b) }
func BenchmarkHostMLX5Send1Owned(b *testing.B) { hostSend(hostPosterMLX5, 1, true)(b) }
func BenchmarkHostMLX5Recv1Owned(b *testing.B) { hostRecv(hostPosterMLX5, true)(b) }

// hostQPs are the host QPs of the three drivers, named, for tests that
// run on each (mlx5's has no fake device to count doorbells, and needs
// no kernel's take: its queues of 1024 are restarted by its rows only).
var hostQPs = []struct {
	name string
	mk   hostQPFunc
}{{"rxe", hostQP}, {"siw", hostQPSiw}, {"mlx5", func(tb testing.TB) (*QP, *conformance.FakeDevice, func(), func()) {
	qp, _ := hostQPMLX5(tb)
	return qp, nil, func() {}, func() {}
}}}

package uverbs

import (
	"encoding/binary"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/conformance"
	"github.com/purerdma/purerdma/internal/provider/rxe"
	"github.com/purerdma/purerdma/internal/provider/siw"
)

// The send and receive rows of the host cost table (make bench-host,
// docs/benchmarks-host.md): PostSend and PostRecv through the real rxe
// provider over Go rings laid out as conformance.BenchSetup, against
// ibv_post_send and ibv_post_recv through rdma-core's librxe over the
// harness's rings. Both doorbells are counted by a fake kernel, not made.

// hostQP is a QP in INIT whose queues are the rxe provider's over Go
// rings, with the fake kernel's take of every published send and receive
// slot.
func hostQP(tb testing.TB) (*QP, *conformance.FakeDevice, func(), func()) {
	tb.Helper()
	u := conformance.BenchSetup
	sqBuf, rqBuf := conformance.RxeRing(9, u.SQ), conformance.RxeRing(7, u.RQ)
	dev := &conformance.FakeDevice{Maps: map[uint64][]byte{1 << 12: rqBuf, 2 << 12: sqBuf}}
	var resp [32]byte // struct rxe_create_qp_resp: rq_mi, sq_mi (offset u64, size u32, pad)
	binary.NativeEndian.PutUint64(resp[0:], 1<<12)
	binary.NativeEndian.PutUint32(resp[8:], uint32(len(rqBuf)))
	binary.NativeEndian.PutUint64(resp[16:], 2<<12)
	binary.NativeEndian.PutUint32(resp[24:], uint32(len(sqBuf)))
	qp := hostQPOn(tb, rxe.Driver(), dev, resp[:], u)
	qp.cap.MaxSendWR, qp.cap.MaxRecvWR = int(u.SQ-1), int(u.RQ-1)
	qp.recv.size = qp.cap.MaxRecvWR
	return qp, dev, func() { kernelTake(sqBuf) }, func() { kernelTake(rqBuf) }
}

// hostQPOn makes the QP on the driver's queues from its CREATE_QP
// response.
func hostQPOn(tb testing.TB, driver provider.Driver, dev *conformance.FakeDevice, resp []byte, u conformance.Setup) *QP {
	tb.Helper()
	q, err := conformance.CreateQP(driver, dev, provider.QPInit{Handle: 7, QPNum: 0x11, Type: abi.IB_UVERBS_QPT_RC,
		MaxSendWR: u.SQ, MaxRecvWR: u.RQ, MaxSendSGE: u.MaxSendSGE, MaxRecvSGE: u.MaxRecvSGE,
		MaxInline: u.MaxInline}, resp)
	if err != nil {
		tb.Fatal(err)
	}
	qp := &QP{typ: RC, recv: recvSide{sge: make([]provider.SGE, 4), size: int(u.RQ)},
		cap:  QPCap{MaxSendWR: int(u.SQ), MaxRecvWR: int(u.RQ), MaxSendSGE: 4, MaxRecvSGE: 4, MaxInlineData: 64},
		ssge: make([]provider.SGE, 4)}
	qp.setSQ(q.SQ)
	qp.recv.setRQ(q.RQ)
	qp.state.Store(uint32(QPSInit))
	qp.setNoReads(false)
	return qp
}

// kernelTake plays the kernel taking every published slot of an rxe ring.
func kernelTake(b []byte) {
	conformance.RxeIndex(b, false).Store(conformance.RxeIndex(b, true).Load())
}

type hostQPFunc func(testing.TB) (*QP, *conformance.FakeDevice, func(), func())

var hostSGE = []SGE{{Addr: 0x10000, Length: 4096, LKey: 0x55}}

// hostSendWRs are the n signaled RDMA writes of hostSGE the send rows
// post in one call.
func hostSendWRs(n int) []SendWR {
	wrs := make([]SendWR, n)
	for i := range wrs {
		wrs[i] = SendWR{ID: uint64(i), Opcode: WRRDMAWrite, Flags: SendSignaled, SGE: hostSGE, RemoteAddr: 0xdead0000, RKey: 0x77}
	}
	return wrs
}

// hostPoster is a driver's QP for the post rows, with the fake kernel's
// turns: take the send queue's or the receive queue's requests, every
// chunk requests; stop says to stop the clock for them (mlx5's turn
// restarts the QP). doorbells, when set, counts the fake device's
// doorbells.
type hostPoster struct {
	qp             *QP
	takeSQ, takeRQ func()
	chunk          int
	stop           bool
	doorbells      func() int
}

// hostPosterOn is the rxe or siw QP mk makes, the kernel taking every
// 256 requests.
func hostPosterOn(mk hostQPFunc) func(testing.TB) hostPoster {
	return func(tb testing.TB) hostPoster {
		qp, dev, takeSQ, takeRQ := mk(tb)
		return hostPoster{qp: qp, takeSQ: takeSQ, takeRQ: takeRQ, chunk: 256, doorbells: func() int { return dev.Doorbells }}
	}
}

// turn runs the kernel's turn f in a benchmark, off p's clock when the
// row stops it (h.stop); the row reports its time with p either way
// (with nothing paused, the loop's own).
func (h hostPoster) turn(p *conformance.Pause, f func()) {
	if h.stop {
		p.Run(f)
		return
	}
	f()
}

// hostOwners are the QP's owner handles when owned (the rows' "-owned"
// variants), nil otherwise.
func hostOwners(tb testing.TB, qp *QP, owned bool) (*SendQueue, *RecvQueue) {
	if !owned {
		return nil, nil
	}
	sq, err := qp.OwnSend()
	if err != nil {
		tb.Fatal(err)
	}
	rq, err := qp.OwnRecv()
	if err != nil {
		tb.Fatal(err)
	}
	return sq, rq
}

func hostSend(mk func(testing.TB) hostPoster, n int, owned bool) func(b *testing.B) {
	return func(b *testing.B) {
		h := mk(b)
		sq, _ := hostOwners(b, h.qp, owned)
		wrs := hostSendWRs(n)
		var p conformance.Pause
		b.ReportAllocs()
		// A count down to the kernel's turn, not posts%h.chunk: the C
		// loops' chunk is a constant, an AND, where a modulus by a
		// variable is an IDIV on every request (tens of cycles).
		left := h.chunk
		for i := 0; b.Loop(); i++ {
			wrs[0].ID = uint64(i)
			var k int
			var err error
			if sq != nil {
				k, err = sq.Post(wrs)
			} else {
				k, err = h.qp.PostSend(wrs)
			}
			if k != n || err != nil {
				b.Fatal(k, err)
			}
			if left -= n; left == 0 {
				h.turn(&p, h.takeSQ)
				left = h.chunk
			}
		}
		p.Report(b)
		if h.doorbells != nil && h.doorbells() == 0 {
			b.Fatal("no doorbell")
		}
	}
}

func hostRecv(mk func(testing.TB) hostPoster, owned bool) func(b *testing.B) {
	return func(b *testing.B) {
		h := mk(b)
		_, rq := hostOwners(b, h.qp, owned)
		wrs := []RecvWR{{ID: 1, SGE: hostSGE}}
		var p conformance.Pause
		b.ReportAllocs()
		left := h.chunk // as in hostSend
		for i := 0; b.Loop(); i++ {
			wrs[0].ID = uint64(i)
			var k int
			var err error
			if rq != nil {
				k, err = rq.Post(wrs)
			} else {
				k, err = h.qp.PostRecv(wrs)
			}
			if k != 1 || err != nil {
				b.Fatal(k, err)
			}
			if left--; left == 0 {
				h.turn(&p, h.takeRQ)
				left = h.chunk
			}
		}
		p.Report(b)
	}
}

// hostLoopSend posts wrs calls times, wrs[0]'s ID the call's number:
// the instructions the host cost table counts (conformance.CostRow.Loop;
// the harnesses' hostloop_send). It does what the C loop does: the
// request through a pointer taken once, and a test of the error alone
// (ibv_post_send's return; PostSend's count is the batch's whenever its
// error is nil, TestPostErrors).
//
//go:noinline
func hostLoopSend(qp *QP, wrs []SendWR, calls int) error {
	first := &wrs[0]
	for i := range calls {
		first.ID = uint64(i)
		if _, err := qp.PostSend(wrs); err != nil {
			return err
		}
	}
	return nil
}

// hostLoopRecv is hostLoopSend for receives.
//
//go:noinline
func hostLoopRecv(qp *QP, wrs []RecvWR, calls int) error {
	first := &wrs[0]
	for i := range calls {
		first.ID = uint64(i)
		if _, err := qp.PostRecv(wrs); err != nil {
			return err
		}
	}
	return nil
}

// hostLoopSendOwned is hostLoopSend through the send side's owner.
//
//go:noinline
func hostLoopSendOwned(sq *SendQueue, wrs []SendWR, calls int) error {
	first := &wrs[0]
	for i := range calls {
		first.ID = uint64(i)
		if _, err := sq.Post(wrs); err != nil {
			return err
		}
	}
	return nil
}

// hostLoopRecvOwned is hostLoopRecv through the receive side's owner.
//
//go:noinline
func hostLoopRecvOwned(rq *RecvQueue, wrs []RecvWR, calls int) error {
	first := &wrs[0]
	for i := range calls {
		first.ID = uint64(i)
		if _, err := rq.Post(wrs); err != nil {
			return err
		}
	}
	return nil
}

// hostCountSend runs ops calls of hostLoopSend (hostLoopSendOwned when
// owned) with n requests each, the kernel taking the send queue every
// chunk requests between them.
func hostCountSend(mk func(testing.TB) hostPoster, n int, owned bool) func(testing.TB, int) {
	return func(tb testing.TB, ops int) {
		h := mk(tb)
		sq, _ := hostOwners(tb, h.qp, owned)
		wrs := hostSendWRs(n)
		loop := func(c int) error { return hostLoopSend(h.qp, wrs, c) }
		if owned {
			loop = func(c int) error { return hostLoopSendOwned(sq, wrs, c) }
		}
		conformance.Chunks(tb, ops, h.chunk/n, loop, h.takeSQ)
	}
}

// hostCountRecv is hostCountSend for receives.
func hostCountRecv(mk func(testing.TB) hostPoster, owned bool) func(testing.TB, int) {
	return func(tb testing.TB, ops int) {
		h := mk(tb)
		_, rq := hostOwners(tb, h.qp, owned)
		wrs := []RecvWR{{ID: 1, SGE: hostSGE}}
		loop := func(c int) error { return hostLoopRecv(h.qp, wrs, c) }
		if owned {
			loop = func(c int) error { return hostLoopRecvOwned(rq, wrs, c) }
		}
		conformance.Chunks(tb, ops, h.chunk, loop, h.takeRQ)
	}
}

// postRows are a driver's post rows on the QPs mk makes, what1 saying
// what send1 does: send1, send16 and recv1 through the QP's locks, and
// send1 and recv1 through the owner handles (compared with the same C
// rows: C has no lock-free handle that is safe).
func postRows(mk func(testing.TB) hostPoster, what1, what16, whatRecv string) []conformance.CostRow {
	return []conformance.CostRow{
		{Name: "send1", What: what1, Iters: 2000000,
			Go: hostSend(mk, 1, false), Count: hostCountSend(mk, 1, false), Loop: hostLoopSend},
		{Name: "send16", What: what16, Iters: 200000,
			Go: hostSend(mk, 16, false), Count: hostCountSend(mk, 16, false), Loop: hostLoopSend},
		{Name: "recv1", What: whatRecv, Iters: 2000000,
			Go: hostRecv(mk, false), Count: hostCountRecv(mk, false), Loop: hostLoopRecv},
		{Name: "send1-owned", C: "send1", What: "send1 through the QP's SendQueue (no lock)", Iters: 2000000,
			Go: hostSend(mk, 1, true), Count: hostCountSend(mk, 1, true), Loop: hostLoopSendOwned},
		{Name: "recv1-owned", C: "recv1", What: "recv1 through the QP's RecvQueue (no lock)", Iters: 2000000,
			Go: hostRecv(mk, true), Count: hostCountRecv(mk, true), Loop: hostLoopRecvOwned},
	}
}

func TestHostCostPost(t *testing.T) {
	conformance.HostCost(t, conformance.BenchSetup, postRows(hostPosterOn(hostQP),
		"post one send (RDMA write, 1 SGE, signaled) + doorbell", "post 16 sends in one call, one doorbell",
		"post one receive (1 SGE)"), 5)
}

// TestHostCostPostSiw is the same on siw, whose doorbell rings only when
// the element before a batch was taken (here after every 256 requests).
func TestHostCostPostSiw(t *testing.T) {
	conformance.HostCost(t, conformance.SiwBenchSetup, postRows(hostPosterOn(hostQPSiw),
		"post one send (RDMA write, 1 SGE, signaled)", "post 16 sends in one call", "post one receive (1 SGE)"), 5)
}

// hostQPSiw is hostQP on siw: element arrays of 1024 SQEs and RQEs; take
// clears every element's flags, as the kernel does when it takes one.
func hostQPSiw(tb testing.TB) (*QP, *conformance.FakeDevice, func(), func()) {
	tb.Helper()
	u := conformance.SiwBenchSetup
	sqBuf, rqBuf := make([]byte, u.SQ*120), make([]byte, u.RQ*112) // siw_sqe, siw_rqe
	dev := &conformance.FakeDevice{Maps: map[uint64][]byte{1 << 12: rqBuf, 2 << 12: sqBuf}}
	var resp [32]byte // struct siw_uresp_create_qp: qp_id, num_sqe, num_rqe, pad, sq_key, rq_key
	binary.NativeEndian.PutUint32(resp[0:], 0x11)
	binary.NativeEndian.PutUint32(resp[4:], u.SQ)
	binary.NativeEndian.PutUint32(resp[8:], u.RQ)
	binary.NativeEndian.PutUint64(resp[16:], 2<<12)
	binary.NativeEndian.PutUint64(resp[24:], 1<<12)
	qp := hostQPOn(tb, siw.Driver(), dev, resp[:], u)
	return qp, dev, func() { conformance.SiwTake(sqBuf, 120) }, func() { conformance.SiwTake(rqBuf, 112) }
}

// The rows as benchmarks, for profiling: go test -bench Host ./uverbs.
func BenchmarkHostSend1(b *testing.B)      { hostSend(hostPosterOn(hostQP), 1, false)(b) }
func BenchmarkHostSend16(b *testing.B)     { hostSend(hostPosterOn(hostQP), 16, false)(b) }
func BenchmarkHostRecv1(b *testing.B)      { hostRecv(hostPosterOn(hostQP), false)(b) }
func BenchmarkHostSend1Owned(b *testing.B) { hostSend(hostPosterOn(hostQP), 1, true)(b) }
func BenchmarkHostRecv1Owned(b *testing.B) { hostRecv(hostPosterOn(hostQP), true)(b) }

package uverbs

import (
	"encoding/binary"
	"errors"
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
	qp := &QP{typ: RC, sq: q.SQ, rq: q.RQ,
		cap:  QPCap{MaxSendWR: int(u.SQ), MaxRecvWR: int(u.RQ), MaxSendSGE: 4, MaxRecvSGE: 4, MaxInlineData: 64},
		ssge: make([]provider.SGE, 4), rsge: make([]provider.SGE, 4)}
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

func hostSend(mk hostQPFunc, n int) func(b *testing.B) {
	return func(b *testing.B) {
		qp, dev, takeSQ, _ := mk(b)
		wrs := hostSendWRs(n)
		b.ReportAllocs()
		posts := 0
		for i := 0; b.Loop(); i++ {
			wrs[0].ID = uint64(i)
			if k, err := qp.PostSend(wrs); k != n || err != nil {
				b.Fatal(k, err)
			}
			posts += n
			if posts%256 == 0 {
				takeSQ()
			}
		}
		if dev.Doorbells == 0 {
			b.Fatal("no doorbell")
		}
	}
}

func hostRecv(mk hostQPFunc) func(b *testing.B) {
	return func(b *testing.B) {
		qp, _, _, takeRQ := mk(b)
		wrs := []RecvWR{{ID: 1, SGE: hostSGE}}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			wrs[0].ID = uint64(i)
			if k, err := qp.PostRecv(wrs); k != 1 || err != nil {
				b.Fatal(k, err)
			}
			if i%256 == 255 {
				takeRQ()
			}
		}
	}
}

// hostLoopSend posts wrs calls times, wrs[0]'s ID the call's number:
// the instructions the host cost table counts (conformance.CostRow.Loop;
// the harnesses' hostloop_send).
//
//go:noinline
func hostLoopSend(qp *QP, wrs []SendWR, calls int) error {
	for i := range calls {
		wrs[0].ID = uint64(i)
		if k, err := qp.PostSend(wrs); k != len(wrs) || err != nil {
			return errors.Join(conformance.ErrShort, err)
		}
	}
	return nil
}

// hostLoopRecv is hostLoopSend for receives.
//
//go:noinline
func hostLoopRecv(qp *QP, wrs []RecvWR, calls int) error {
	for i := range calls {
		wrs[0].ID = uint64(i)
		if k, err := qp.PostRecv(wrs); k != len(wrs) || err != nil {
			return errors.Join(conformance.ErrShort, err)
		}
	}
	return nil
}

// hostCountSend runs ops calls of hostLoopSend with n requests each, the
// kernel taking the send queue every 256 requests between them.
func hostCountSend(mk hostQPFunc, n int) func(testing.TB, int) {
	return func(tb testing.TB, ops int) {
		qp, _, takeSQ, _ := mk(tb)
		wrs := hostSendWRs(n)
		conformance.Chunks(tb, ops, 256/n, func(c int) error { return hostLoopSend(qp, wrs, c) }, takeSQ)
	}
}

// hostCountRecv is hostCountSend for receives.
func hostCountRecv(mk hostQPFunc) func(testing.TB, int) {
	return func(tb testing.TB, ops int) {
		qp, _, _, takeRQ := mk(tb)
		wrs := []RecvWR{{ID: 1, SGE: hostSGE}}
		conformance.Chunks(tb, ops, 256, func(c int) error { return hostLoopRecv(qp, wrs, c) }, takeRQ)
	}
}

func TestHostCostPost(t *testing.T) {
	conformance.HostCost(t, conformance.BenchSetup, []conformance.CostRow{
		{Name: "send1", What: "post one send (RDMA write, 1 SGE, signaled) + doorbell", Iters: 2000000,
			Go: hostSend(hostQP, 1), Count: hostCountSend(hostQP, 1), Loop: hostLoopSend},
		{Name: "send16", What: "post 16 sends in one call, one doorbell", Iters: 200000,
			Go: hostSend(hostQP, 16), Count: hostCountSend(hostQP, 16), Loop: hostLoopSend},
		{Name: "recv1", What: "post one receive (1 SGE)", Iters: 2000000,
			Go: hostRecv(hostQP), Count: hostCountRecv(hostQP), Loop: hostLoopRecv},
	}, 5)
}

// TestHostCostPostSiw is the same on siw, whose doorbell rings only when
// the element before a batch was taken (here after every 256 requests).
func TestHostCostPostSiw(t *testing.T) {
	conformance.HostCost(t, conformance.SiwBenchSetup, []conformance.CostRow{
		{Name: "send1", What: "post one send (RDMA write, 1 SGE, signaled)", Iters: 2000000,
			Go: hostSend(hostQPSiw, 1), Count: hostCountSend(hostQPSiw, 1), Loop: hostLoopSend},
		{Name: "send16", What: "post 16 sends in one call", Iters: 200000,
			Go: hostSend(hostQPSiw, 16), Count: hostCountSend(hostQPSiw, 16), Loop: hostLoopSend},
		{Name: "recv1", What: "post one receive (1 SGE)", Iters: 2000000,
			Go: hostRecv(hostQPSiw), Count: hostCountRecv(hostQPSiw), Loop: hostLoopRecv},
	}, 5)
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
func BenchmarkHostSend1(b *testing.B)  { hostSend(hostQP, 1)(b) }
func BenchmarkHostSend16(b *testing.B) { hostSend(hostQP, 16)(b) }
func BenchmarkHostRecv1(b *testing.B)  { hostRecv(hostQP)(b) }

package mlx5

import (
	"bytes"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

// pollWorld is a CQ of 16 entries shared by an RC QP with its own receive
// queue (user index 0, QP 0x11) and one on an SRQ (user index 1, QP
// 0x22), with sends and receives posted: what TestPollFast polls twice.
type pollWorld struct {
	cq    *cq
	a, b  *qp
	srq   *srq
	ctrs  []uint16 // the WQE counter of each send posted on a
	ctrsB []uint16 // and on b
}

func newPollWorld(t *testing.T) *pollWorld {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	w := &pollWorld{cq: newCQ(t, c, 15, 7)}
	w.srq, _, _ = newSRQ(t, c, 16, 1, 0x42)
	w.a = newQP(t, c, qpOpts{sendWR: 32, sendSGE: 1, recvWR: 32, recvSGE: 1, qpn: 0x11, sendCQ: w.cq})
	w.b = newQP(t, c, qpOpts{sendWR: 4, sendSGE: 1, srq: w.srq, qpn: 0x22, sendCQ: w.cq})
	if w.a.rsn != 0 || w.b.rsn != 1 {
		t.Fatalf("user indices %d, %d", w.a.rsn, w.b.rsn)
	}
	for i := 0; i < 24; i++ {
		w.ctrs = append(w.ctrs, uint16(w.a.sq.curPost))
		if err := w.a.sq.Put(&provider.SendWR{ID: uint64(100 + i), Opcode: abi.IB_UVERBS_WR_SEND, SGE: []provider.SGE{{Addr: 0x1000, Length: 8, LKey: 1}}}); err != nil {
			t.Fatal(err)
		}
		if err := w.a.rq.Put(&provider.RecvWR{ID: uint64(200 + i), SGE: []provider.SGE{{Addr: 0x2000, Length: 64, LKey: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		w.ctrsB = append(w.ctrsB, uint16(w.b.sq.curPost))
		if err := w.b.sq.Put(&provider.SendWR{ID: uint64(400 + i), Opcode: abi.IB_UVERBS_WR_RDMA_WRITE, SGE: []provider.SGE{{Addr: 0x1000, Length: 8, LKey: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	w.b.sq.Flush()
	w.a.sq.Flush()
	w.a.rq.Flush()
	for i := 0; i < 12; i++ {
		if err := w.srq.Put(&provider.RecvWR{ID: uint64(300 + i), SGE: []provider.SGE{{Addr: 0x3000, Length: 64, LKey: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	w.srq.Flush()
	return w
}

// garbageWC is a completion with every field set, so that a field one
// path writes and the other leaves shows.
func garbageWC(i int) provider.WC {
	return provider.WC{ID: 0xdead0000 + uint64(i), Status: 0x77, Opcode: 0x66, VendorErr: 0x55, ByteLen: 0x44,
		ImmData: 0x33, QPNum: 0x22, SrcQP: 0x11, Flags: 0xff, PKeyIndex: 0xeeee, SLID: 0xdddd, SL: 0xcc, DLIDPathBits: 0xbb, PortNum: 0xaa}
}

// TestPollFast polls the same CQEs as package cq does, through Empty and
// then PollFound (pollFast, CQE version 1: what PollStatus is), and
// through pollGeneral (parse, CQE by CQE) on two identical worlds, and
// compares every completion and what polling leaves behind: the consumer
// index, the doorbell record (spoiled before each poll, so that a poll
// that should write it and does not shows), the ring, the queues' tails
// and the SRQ. Every case ends with a poll of the empty CQ.
func TestPollFast(t *testing.T) {
	req := func(w *pollWorld, i int, sop uint32) cqeFields {
		return cqeFields{sopDropQPN: sop<<24 | 0x11, srqnUIdx: 0, wqeCounter: w.ctrs[i], byteCnt: 0x1234}
	}
	resp := func(op uint8, uidx, qpn uint32, ctr uint16) cqeFields {
		return cqeFields{opOwn: op << 4, srqnUIdx: uidx, sopDropQPN: qpn, wqeCounter: ctr, byteCnt: 0x40,
			immInvalPKey: 0x01020304, flagsRQPN: 0x0a000077 | uint32(ctr%4)<<28, slid: 0x3344, mlPath: 0xff}
	}
	cases := []struct {
		name  string
		cqes  func(w *pollWorld) []cqeFields
		polls []int
	}{
		{"requester", func(w *pollWorld) []cqeFields {
			var e []cqeFields
			for i, sop := range []uint32{opRDMAWrite, opRDMAWriteImm, opSend, opSendImm, opSendInval, opRDMARead, opSend} {
				e = append(e, req(w, i, sop))
			}
			return e
		}, []int{3, 16, 1}},
		{"responder", func(w *pollWorld) []cqeFields {
			var e []cqeFields
			for i, op := range []uint8{cqeRespWrImm, cqeRespSend, cqeRespSendI, cqeRespSendIn, cqeRespSendI} {
				e = append(e, resp(op, 0, 0x11, uint16(i)))
			}
			return e
		}, []int{16}},
		{"srq", func(w *pollWorld) []cqeFields {
			return []cqeFields{resp(cqeRespSend, 1, 0x22, 0), resp(cqeRespSendI, 1, 0x22, 2), resp(cqeRespSend, 0, 0x11, 0), resp(cqeRespWrImm, 1, 0x22, 1)}
		}, []int{2, 2}},
		{"mixed, wrapping", func(w *pollWorld) []cqeFields {
			var e []cqeFields
			for i := 0; i < 22; i++ {
				switch i % 3 {
				case 0:
					e = append(e, req(w, i, opSend))
				case 1:
					e = append(e, resp(cqeRespSendI, 0, 0x11, 0))
				default:
					e = append(e, resp(cqeRespSend, 1, 0x22, uint16(i/3)))
				}
			}
			return e
		}, []int{5, 0, 5, 5, 16, 16, 0}},
		{"two send queues", func(w *pollWorld) []cqeFields {
			var e []cqeFields
			for i := 0; i < 3; i++ {
				e = append(e, req(w, i, opSend),
					cqeFields{sopDropQPN: opRDMAWrite<<24 | 0x22, srqnUIdx: 1, wqeCounter: w.ctrsB[i]})
			}
			return e
		}, []int{16}},
		{"errors and rare opcodes", func(w *pollWorld) []cqeFields {
			return []cqeFields{
				req(w, 0, opSend),
				{opOwn: cqeReqErr << 4, sopDropQPN: 0x11, wqeCounter: w.ctrs[1], syndrome: syndWRFlushErr, vendorErr: 0x99},
				req(w, 2, opAtomicCS),
				req(w, 3, opNOP),
				resp(cqeRespSend, 0, 0x11, 0),
				{opOwn: cqeRespErr << 4, sopDropQPN: 0x11, syndrome: syndLocalProtErr},
				{opOwn: cqeResizeCQ << 4, sopDropQPN: 0x11},
				resp(cqeRespSend, 1, 0x22, 20), // past the SRQ: a general error
				resp(cqeRespSend, 0, 0x11, 0),
			}
		}, []int{16}},
		{"unknown QP ends the poll", func(w *pollWorld) []cqeFields {
			return []cqeFields{req(w, 0, opSend), req(w, 1, opSend), {sopDropQPN: 0x0a000011, srqnUIdx: 9}, req(w, 2, opSend)}
		}, []int{16, 16}},
		{"inline scatter goes the general way", func(w *pollWorld) []cqeFields {
			e := resp(cqeRespSend, 0, 0x11, 0)
			e.opOwn |= inlineScatter32
			e.byteCnt = 0
			return []cqeFields{req(w, 0, opSend), e, req(w, 1, opSend)}
		}, []int{16}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fast, gen := newPollWorld(t), newPollWorld(t)
			for _, w := range []*pollWorld{fast, gen} {
				for i, e := range tc.cqes(w) {
					putCQE(w.cq, uint32(i), e.bytes())
				}
			}
			for round, k := range append(tc.polls, 16) {
				wf, wg := make([]provider.WC, k), make([]provider.WC, k)
				for i := range wf {
					wf[i], wg[i] = garbageWC(i), garbageWC(i)
				}
				copy(fast.cq.db.b, []byte{0xde, 0xad, 0xbe, 0xef})
				copy(gen.cq.db.b, []byte{0xde, 0xad, 0xbe, 0xef})
				var nf int
				var ff bool
				if !fast.cq.Empty() {
					nf, ff = fast.cq.PollFound(wf)
				}
				ng, fg := gen.cq.pollGeneral(wg)
				if nf != ng || ff != fg {
					t.Fatalf("poll %d: fast %d (failed %v), general %d (failed %v)", round, nf, ff, ng, fg)
				}
				for i := range wf {
					if wf[i] != wg[i] {
						t.Errorf("poll %d, completion %d:\nfast    %+v\ngeneral %+v", round, i, wf[i], wg[i])
					}
				}
				compareWorlds(t, round, fast, gen)
			}
		})
	}
}

func compareWorlds(t *testing.T, round int, f, g *pollWorld) {
	t.Helper()
	if a, b := f.cq.consIndex.Load(), g.cq.consIndex.Load(); a != b {
		t.Errorf("poll %d: consumer index %d, general %d", round, a, b)
	}
	if !bytes.Equal(f.cq.db.b, g.cq.db.b) || !bytes.Equal(f.cq.buf, g.cq.buf) {
		t.Errorf("poll %d: doorbell record or ring differ", round)
	}
	for _, q := range [][2]*qp{{f.a, g.a}, {f.b, g.b}} {
		if q[0].sq.tail.Load() != q[1].sq.tail.Load() || q[0].rq.tail.Load() != q[1].rq.tail.Load() {
			t.Errorf("poll %d: QP %#x tails %d/%d, general %d/%d", round, q[0].qpn,
				q[0].sq.tail.Load(), q[0].rq.tail.Load(), q[1].sq.tail.Load(), q[1].rq.tail.Load())
		}
	}
	fs, gs := f.srq, g.srq
	if fs.head != gs.head || fs.tail != gs.tail || fs.waitqHead != gs.waitqHead || fs.waitqTail != gs.waitqTail ||
		!bytes.Equal(fs.buf, gs.buf) || !bytes.Equal(fs.db.b, gs.db.b) {
		t.Errorf("poll %d: SRQ differs", round)
	}
}

// TestOwned checks owned's multiply against libmlx5's get_sw_cqe test,
// the opcode below MLX5_CQE_INVALID and the owner bit equal to the pass
// bit of n, for every last byte of a CQE at indices around the ring's
// wraps.
func TestOwned(t *testing.T) {
	for _, mask := range []uint32{0, 1, 7, 255, 1<<22 - 1} {
		for _, n := range []uint32{0, 1, mask, mask + 1, mask + 2, 2*mask + 1, 2*mask + 2, 1<<32 - 1} {
			for op := range 256 {
				want := op>>4 < cqeInvalid && (op&cqeOwnerMask != 0) == (n&(mask+1) != 0)
				if got := owned(uint8(op), n, mask); got != want {
					t.Fatalf("owned(%#x, %d, %#x) = %v, want %v", op, n, mask, got, want)
				}
			}
		}
	}
}

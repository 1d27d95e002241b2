package mlx5

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// putCQE writes the 64-byte CQE b as the device would for the n'th
// completion of q: in slot n mod size, with the owner bit of n's pass.
func putCQE(q *cq, n uint32, b []byte) {
	if len(b) != 64 {
		panic("CQE of the wrong size")
	}
	off := int(n&q.mask) * 64
	copy(q.buf[off:off+64], b)
	q.buf[off+63] &^= 1
	if n&(q.mask+1) != 0 {
		q.buf[off+63] |= 1
	}
}

// cqeBytes builds a CQE's 64 bytes from its fields, big-endian as the
// device writes them.
type cqeFields struct {
	mlPath       uint8
	slid         uint16
	flagsRQPN    uint32
	srqnUIdx     uint32
	immInvalPKey uint32
	byteCnt      uint32
	sopDropQPN   uint32
	wqeCounter   uint16
	opOwn        uint8
	// error CQEs
	vendorErr, syndrome uint8
}

func (f cqeFields) bytes() []byte {
	b := make([]byte, 64)
	b[17] = f.mlPath
	binary.BigEndian.PutUint16(b[22:], f.slid)
	binary.BigEndian.PutUint32(b[24:], f.flagsRQPN)
	binary.BigEndian.PutUint32(b[32:], f.srqnUIdx)
	binary.BigEndian.PutUint32(b[36:], f.immInvalPKey)
	binary.BigEndian.PutUint32(b[44:], f.byteCnt)
	b[54], b[55] = f.vendorErr, f.syndrome
	binary.BigEndian.PutUint32(b[56:], f.sopDropQPN)
	binary.BigEndian.PutUint16(b[60:], f.wqeCounter)
	b[63] = f.opOwn
	return b
}

// TestCreateCQ: the ring is the next power of two above the size asked
// for, every CQE invalid; the request names the ring and the doorbell
// record, 64-byte CQEs, and with dynamic UARs the non-cached page.
func TestCreateCQ(t *testing.T) {
	for _, tc := range []struct {
		cqe, want uint32
	}{{1, 1}, {2, 3}, {3, 3}, {4, 7}, {1000, 1023}, {1 << 16, 1<<17 - 1}} {
		c := openCtx(t, newFakeDev(t), ucontextResp(true))
		init := provider.CQInit{CQE: tc.cqe}
		req := make([]byte, createCQSize)
		p, err := c.CreateCQ(&init, req)
		if err != nil {
			t.Fatalf("CQE %d: %v", tc.cqe, err)
		}
		q := p.(*pendingCQ).q
		var r abi.MLX5CreateCQ
		decode(req, &r)
		if init.CQE != tc.want || len(q.buf) != int(tc.want+1)*64 {
			t.Errorf("CQE %d: asks for %d, ring of %d bytes; want %d", tc.cqe, init.CQE, len(q.buf), tc.want)
		}
		if r != (abi.MLX5CreateCQ{BufAddr: mem.Addr(q.buf), DBAddr: q.db.addr(), CQESize: 64}) {
			t.Errorf("request %+v", r)
		}
		for i := 63; i < len(q.buf); i += 64 {
			if q.buf[i] != 0xf0 || q.buf[i-63] != 0 {
				t.Fatalf("CQE %d not invalid", i/64)
			}
		}
		p.Abort()
	}
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	for _, n := range []uint32{0, 1 << 24, 1 << 31} {
		if _, err := c.CreateCQ(&provider.CQInit{CQE: n}, make([]byte, createCQSize)); !errors.Is(err, provider.ErrInvalid) {
			t.Errorf("CQ of %d: %v", n, err)
		}
	}

	dc := openCtx(t, &fakeUARDev{fakeDev: newFakeDev(t)}, ucontextResp(false))
	req := make([]byte, createCQSize)
	p, err := dc.CreateCQ(&provider.CQInit{CQE: 1}, req)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Abort()
	if want := hexBytes("40 00 00 00 00 00 02 00 64 00 00 00 00 00 00 00"); !bytes.Equal(req[16:], want) {
		t.Errorf("request's tail % x, want % x", req[16:], want)
	}
}

// TestCQEToWC: each kind of CQE as the work completion libmlx5 makes of
// it (CQE version 1: the CQE names the QP by its user index). Fields
// libmlx5 leaves alone keep the 0x5a... the test filled wc with.
func TestCQEToWC(t *testing.T) {
	stale := provider.WC{ID: 0x5a5a, Status: 0x5a, Opcode: 0x5a, VendorErr: 0x5a, ByteLen: 0x5a, ImmData: 0x5a, QPNum: 0x5a,
		SrcQP: 0x5a, Flags: 0x5a, PKeyIndex: 0x5a, SLID: 0x5a, SL: 0x5a, DLIDPathBits: 0x5a, PortNum: 0x5a}
	for _, tc := range []struct {
		name string
		cqe  cqeFields
		want provider.WC
	}{
		{"SEND", cqeFields{sopDropQPN: 0x0a000123, srqnUIdx: 0, wqeCounter: 0},
			provider.WC{ID: 100, Status: 0, Opcode: abi.IB_WC_SEND, VendorErr: 0x5a, ByteLen: 0x5a, ImmData: 0x5a, QPNum: 0x123,
				SrcQP: 0x5a, Flags: 0, PKeyIndex: 0x5a, SLID: 0x5a, SL: 0x5a, DLIDPathBits: 0x5a, PortNum: 0x5a}},
		{"SEND_WITH_IMM", cqeFields{sopDropQPN: 0x0b000123},
			provider.WC{ID: 100, Opcode: abi.IB_WC_SEND, VendorErr: 0x5a, ByteLen: 0x5a, ImmData: 0x5a, QPNum: 0x123,
				SrcQP: 0x5a, Flags: abi.IB_WC_WITH_IMM, PKeyIndex: 0x5a, SLID: 0x5a, SL: 0x5a, DLIDPathBits: 0x5a, PortNum: 0x5a}},
		{"RDMA_WRITE_WITH_IMM", cqeFields{sopDropQPN: 0x09000123},
			provider.WC{ID: 100, Opcode: abi.IB_WC_RDMA_WRITE, VendorErr: 0x5a, ByteLen: 0x5a, ImmData: 0x5a, QPNum: 0x123,
				SrcQP: 0x5a, Flags: abi.IB_WC_WITH_IMM, PKeyIndex: 0x5a, SLID: 0x5a, SL: 0x5a, DLIDPathBits: 0x5a, PortNum: 0x5a}},
		{"RDMA_READ", cqeFields{sopDropQPN: 0x10000123, byteCnt: 0x1234},
			provider.WC{ID: 100, Opcode: abi.IB_WC_RDMA_READ, VendorErr: 0x5a, ByteLen: 0x1234, ImmData: 0x5a, QPNum: 0x123,
				SrcQP: 0x5a, PKeyIndex: 0x5a, SLID: 0x5a, SL: 0x5a, DLIDPathBits: 0x5a, PortNum: 0x5a}},
		{"ATOMIC_CMP_AND_SWP", cqeFields{sopDropQPN: 0x11000123, byteCnt: 0x99},
			provider.WC{ID: 100, Opcode: abi.IB_WC_COMP_SWAP, VendorErr: 0x5a, ByteLen: 8, ImmData: 0x5a, QPNum: 0x123,
				SrcQP: 0x5a, PKeyIndex: 0x5a, SLID: 0x5a, SL: 0x5a, DLIDPathBits: 0x5a, PortNum: 0x5a}},
		{"ATOMIC_FETCH_AND_ADD", cqeFields{sopDropQPN: 0x12000123},
			provider.WC{ID: 100, Opcode: abi.IB_WC_FETCH_ADD, VendorErr: 0x5a, ByteLen: 8, ImmData: 0x5a, QPNum: 0x123,
				SrcQP: 0x5a, PKeyIndex: 0x5a, SLID: 0x5a, SL: 0x5a, DLIDPathBits: 0x5a, PortNum: 0x5a}},
		{"RECV", cqeFields{opOwn: cqeRespSend << 4, sopDropQPN: 0x123, byteCnt: 77, flagsRQPN: 0x05000456, slid: 0x0102, mlPath: 0x83, immInvalPKey: 0xaaaa0003},
			provider.WC{ID: 200, Opcode: abi.IB_WC_RECV, VendorErr: 0x5a, ByteLen: 77, ImmData: 0x5a, QPNum: 0x123,
				SrcQP: 0x456, PKeyIndex: 3, SLID: 0x102, SL: 5, DLIDPathBits: 3, PortNum: 0x5a}},
		{"RECV with immediate and GRH", cqeFields{opOwn: cqeRespSendI << 4, sopDropQPN: 0x123, byteCnt: 8, flagsRQPN: 0x2f000001, immInvalPKey: 0xdeadbeef},
			provider.WC{ID: 200, Opcode: abi.IB_WC_RECV, VendorErr: 0x5a, ByteLen: 8, ImmData: 0xdeadbeef, QPNum: 0x123,
				SrcQP: 1, Flags: abi.IB_WC_WITH_IMM | abi.IB_WC_GRH, PKeyIndex: 0xbeef, SL: 15, PortNum: 0x5a}},
		{"RECV_RDMA_WITH_IMM", cqeFields{opOwn: cqeRespWrImm << 4, sopDropQPN: 0x123, immInvalPKey: 0x01020304},
			provider.WC{ID: 200, Opcode: abi.IB_WC_RECV_RDMA_WITH_IMM, VendorErr: 0x5a, ImmData: 0x01020304, QPNum: 0x123,
				Flags: abi.IB_WC_WITH_IMM, PKeyIndex: 0x0304, PortNum: 0x5a}},
		{"RECV of SEND_WITH_INV", cqeFields{opOwn: cqeRespSendIn << 4, sopDropQPN: 0x123, immInvalPKey: 0x00abcdef},
			provider.WC{ID: 200, Opcode: abi.IB_WC_RECV, VendorErr: 0x5a, ImmData: 0xabcdef, QPNum: 0x123,
				Flags: abi.IB_WC_WITH_INVALIDATE, PKeyIndex: 0xcdef, PortNum: 0x5a}},
		{"send error", cqeFields{opOwn: cqeReqErr << 4, sopDropQPN: 0x0a000123, syndrome: syndTransportRetry, vendorErr: 0x81},
			provider.WC{ID: 100, Status: abi.IB_WC_RETRY_EXC_ERR, Opcode: 0x5a, VendorErr: 0x81, ByteLen: 0x5a, ImmData: 0x5a, QPNum: 0x123,
				SrcQP: 0x5a, PKeyIndex: 0x5a, SLID: 0x5a, SL: 0x5a, DLIDPathBits: 0x5a, PortNum: 0x5a}},
		{"receive flushed", cqeFields{opOwn: cqeRespErr << 4, sopDropQPN: 0x123, syndrome: syndWRFlushErr, vendorErr: 0xf9},
			provider.WC{ID: 200, Status: abi.IB_WC_WR_FLUSH_ERR, Opcode: 0x5a, VendorErr: 0xf9, ByteLen: 0x5a, ImmData: 0x5a, QPNum: 0x123,
				SrcQP: 0x5a, PKeyIndex: 0x5a, SLID: 0x5a, SL: 0x5a, DLIDPathBits: 0x5a, PortNum: 0x5a}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := openCtx(t, newFakeDev(t), ucontextResp(true))
			q := newQP(t, c, qpOpts{sendWR: 4, sendSGE: 1, recvWR: 4, recvSGE: 1, qpn: 0x123})
			q.sq.Put(&provider.SendWR{ID: 100, Opcode: abi.IB_UVERBS_WR_SEND, SGE: []provider.SGE{sge1}})
			q.sq.Flush()
			q.rq.Put(&provider.RecvWR{ID: 200, SGE: []provider.SGE{sge1}})
			q.rq.Flush()
			putCQE(q.sendCQ, 0, tc.cqe.bytes())
			wc := []provider.WC{stale, stale}
			if n := q.sendCQ.Poll(wc); n != 1 {
				t.Fatalf("polled %d", n)
			}
			if diff := cmp.Diff(tc.want, wc[0]); diff != "" {
				t.Errorf("WC (-want +got):\n%s", diff)
			}
			if wc[1] != stale {
				t.Error("Poll wrote past its completions")
			}
			if got := binary.BigEndian.Uint32(q.sendCQ.db.b); got != 1 {
				t.Errorf("consumer index in the doorbell record %d, want 1", got)
			}
			sq, rq := q.sq.tail.Load(), q.rq.tail.Load()
			if op := tc.cqe.opOwn >> 4; op == cqeReq || op == cqeReqErr {
				if sq != 1 || rq != 0 {
					t.Errorf("tails: send %d, receive %d; want 1, 0", sq, rq)
				}
			} else if sq != 0 || rq != 1 {
				t.Errorf("tails: send %d, receive %d; want 0, 1", sq, rq)
			}
		})
	}
}

func TestErrStatus(t *testing.T) {
	for synd, want := range map[uint8]uint32{
		0x01: abi.IB_WC_LOC_LEN_ERR, 0x02: abi.IB_WC_LOC_QP_OP_ERR, 0x04: abi.IB_WC_LOC_PROT_ERR,
		0x05: abi.IB_WC_WR_FLUSH_ERR, 0x06: abi.IB_WC_MW_BIND_ERR, 0x10: abi.IB_WC_BAD_RESP_ERR,
		0x11: abi.IB_WC_LOC_ACCESS_ERR, 0x12: abi.IB_WC_REM_INV_REQ_ERR, 0x13: abi.IB_WC_REM_ACCESS_ERR,
		0x14: abi.IB_WC_REM_OP_ERR, 0x15: abi.IB_WC_RETRY_EXC_ERR, 0x16: abi.IB_WC_RNR_RETRY_EXC_ERR,
		0x22: abi.IB_WC_REM_ABORT_ERR, 0x00: abi.IB_WC_GENERAL_ERR, 0x03: abi.IB_WC_GENERAL_ERR, 0xff: abi.IB_WC_GENERAL_ERR,
	} {
		if got := errStatus(synd); got != want {
			t.Errorf("syndrome %#x: status %d, want %d", synd, got, want)
		}
	}
}

// TestOwnerBit: a CQE is ours when its owner bit matches the pass over
// the ring; after a wrap the device's CQEs of the last pass are not.
func TestOwnerBit(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	q := newQP(t, c, qpOpts{sendWR: 8, sendSGE: 1, qpn: 5, sendCQ: newCQ(t, c, 3, 7)})
	cq := q.sendCQ
	if cq.mask != 3 {
		t.Fatalf("ring of %d", cq.mask+1)
	}
	send := provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND}
	wc := make([]provider.WC, 8)
	for n := uint32(0); n < 12; n++ {
		send.ID = uint64(n)
		q.sq.Put(&send)
		q.sq.Flush()
		putCQE(cq, n, cqeFields{sopDropQPN: 0x0a000005, wqeCounter: uint16(n)}.bytes())
		// A CQE of the previous pass in the next slot is not ours.
		if got := cq.Poll(wc); got != 1 || wc[0].ID != uint64(n) {
			t.Fatalf("completion %d: polled %d, ID %d", n, got, wc[0].ID)
		}
		if got := cq.Poll(wc); got != 0 {
			t.Fatalf("after completion %d: polled %d more", n, got)
		}
	}
	if got := binary.BigEndian.Uint32(cq.db.b); got != 12 || cq.consIndex.Load() != 12 {
		t.Errorf("consumer index %d", got)
	}
	// A CQE with the invalid opcode is never ours.
	putCQE(cq, 12, cqeFields{opOwn: cqeInvalid << 4, sopDropQPN: 5}.bytes())
	if cq.Poll(wc) != 0 {
		t.Error("polled an invalid CQE")
	}
	// Take keeps the slot until Release.
	putCQE(cq, 12, cqeFields{sopDropQPN: 0x0a000005, wqeCounter: 12}.bytes())
	q.sq.Put(&send)
	q.sq.Flush()
	if !cq.Take(&wc[0]) || binary.BigEndian.Uint32(cq.db.b) != 12 {
		t.Error("Take")
	}
	cq.Release()
	if binary.BigEndian.Uint32(cq.db.b) != 13 {
		t.Error("Release did not hand the slot back")
	}
}

// TestPollUnknownQP: a CQE of no known QP ends the poll; the completions
// before it are returned and it is consumed.
func TestPollUnknownQP(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	q := newQP(t, c, qpOpts{sendWR: 4, sendSGE: 1, qpn: 5})
	q.sq.Put(&provider.SendWR{ID: 1, Opcode: abi.IB_UVERBS_WR_SEND})
	q.sq.Flush()
	putCQE(q.sendCQ, 0, cqeFields{sopDropQPN: 0x0a000005}.bytes())
	putCQE(q.sendCQ, 1, cqeFields{sopDropQPN: 0x0a000005, srqnUIdx: 9}.bytes())
	putCQE(q.sendCQ, 2, cqeFields{sopDropQPN: 0x0a000005}.bytes())
	wc := make([]provider.WC, 4)
	if n := q.sendCQ.Poll(wc); n != 1 || q.sendCQ.consIndex.Load() != 2 {
		t.Errorf("polled %d, consumer index %d; want 1, 2", n, q.sendCQ.consIndex.Load())
	}
	if n := q.sendCQ.Poll(wc); n != 1 {
		t.Errorf("then polled %d", n)
	}
}

// TestCQEVersion0: with CQE version 0 a QP has no user index (0xffffff in
// CREATE_QP) and CQEs name it by QP number.
func TestCQEVersion0(t *testing.T) {
	r := ucontextResp(true)
	r.CQEVersion = 0
	c := openCtx(t, newFakeDev(t), r)
	q := newQP(t, c, qpOpts{sendWR: 4, sendSGE: 1, recvWR: 4, recvSGE: 1, qpn: 0x321, wantReq: func(t *testing.T, req []byte, _ *provider.QPInit) {
		if u := binary.NativeEndian.Uint32(req[32:]); u != 0xffffff {
			t.Errorf("user index %#x", u)
		}
	}})
	q.sq.Put(&provider.SendWR{ID: 7, Opcode: abi.IB_UVERBS_WR_SEND})
	q.sq.Flush()
	q.rq.Put(&provider.RecvWR{ID: 8})
	q.rq.Flush()
	putCQE(q.sendCQ, 0, cqeFields{sopDropQPN: 0x0a000321, srqnUIdx: 0x55}.bytes())
	putCQE(q.sendCQ, 1, cqeFields{opOwn: cqeRespSend << 4, sopDropQPN: 0x321}.bytes())
	wc := make([]provider.WC, 2)
	if n := q.sendCQ.Poll(wc); n != 2 || wc[0].ID != 7 || wc[1].ID != 8 {
		t.Errorf("polled %d: %+v", n, wc)
	}
	if q.rsn != 0x321 || c.qps.find(0x321) != q {
		t.Error("QP not found by number")
	}
}

// TestArm: the arm request in the doorbell record's second word, and the
// same with the CQ number in the UAR's CQ doorbell, big-endian; an event
// advances the sequence number.
func TestArm(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	cq := newCQ(t, c, 4, 0x1234)
	cq.consIndex.Store(0x10203)
	if !cq.Arm(false) {
		t.Fatal("not armed")
	}
	if got, want := cq.db.b, hexBytes("00 00 00 00 00 01 02 03"); !bytes.Equal(got, want) {
		t.Errorf("doorbell record % x, want % x", got, want)
	}
	if got, want := c.uars[0][0x20:0x28], hexBytes("00 01 02 03 00 00 12 34"); !bytes.Equal(got, want) {
		t.Errorf("CQ doorbell % x, want % x", got, want)
	}
	cq.Event()
	cq.Event()
	cq.Arm(true)
	if got, want := c.uars[0][0x20:0x28], hexBytes("21 01 02 03 00 00 12 34"); !bytes.Equal(got, want) {
		t.Errorf("solicited arm after two events % x, want % x", got, want)
	}
	if got, want := cq.db.b[4:], hexBytes("21 01 02 03"); !bytes.Equal(got, want) {
		t.Errorf("doorbell record's arm word % x", got)
	}
	if err := cq.Resize(nil); !errors.Is(err, provider.ErrUnsupported) {
		t.Errorf("Resize: %v", err)
	}
}

// TestScatterToCQE: a small receive arrives in the CQE and Poll copies it
// to the WQE's buffers; so does an RDMA read's data, into the send WQE's.
func TestScatterToCQE(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	q := newQP(t, c, qpOpts{sendWR: 4, sendSGE: 2, recvWR: 4, recvSGE: 2, qpn: 0x123})
	dst := userBuf(t, 64)
	a := mem.Addr(dst)
	q.rq.Put(&provider.RecvWR{ID: 1, SGE: []provider.SGE{{Addr: a, Length: 5, LKey: 1}, {Addr: a + 32, Length: 16, LKey: 1}}})
	q.rq.Flush()
	e := cqeFields{opOwn: cqeRespSend<<4 | inlineScatter32, sopDropQPN: 0x123, byteCnt: 10}.bytes()
	copy(e, "0123456789")
	putCQE(q.sendCQ, 0, e)
	wc := make([]provider.WC, 1)
	if n := q.sendCQ.Poll(wc); n != 1 || wc[0].Status != 0 || wc[0].ByteLen != 10 {
		t.Fatalf("polled %d: %+v", n, wc[0])
	}
	if string(dst[:5]) != "01234" || string(dst[32:37]) != "56789" || dst[5] != 0 || dst[37] != 0 {
		t.Errorf("scattered % x", dst[:40])
	}

	clear(dst)
	q.sq.Put(&provider.SendWR{ID: 2, Opcode: abi.IB_UVERBS_WR_RDMA_READ, SGE: []provider.SGE{{Addr: a + 8, Length: 3, LKey: 1}, {Addr: a + 20, Length: 9, LKey: 1}}})
	q.sq.Flush()
	e = cqeFields{opOwn: cqeReq<<4 | inlineScatter32, sopDropQPN: 0x10000123, byteCnt: 6}.bytes()
	copy(e, "abcdef")
	putCQE(q.sendCQ, 1, e)
	if n := q.sendCQ.Poll(wc); n != 1 || wc[0].Status != 0 || wc[0].ID != 2 {
		t.Fatalf("polled %d: %+v", n, wc[0])
	}
	if string(dst[8:11]) != "abc" || string(dst[20:23]) != "def" {
		t.Errorf("scattered % x", dst[:32])
	}

	// More than the WQE's buffers hold: a length error.
	q.rq.Put(&provider.RecvWR{ID: 3, SGE: []provider.SGE{{Addr: a, Length: 2, LKey: 1}}})
	q.rq.Flush()
	e = cqeFields{opOwn: cqeRespSend<<4 | inlineScatter32, sopDropQPN: 0x123, byteCnt: 20}.bytes()
	putCQE(q.sendCQ, 2, e)
	if n := q.sendCQ.Poll(wc); n != 1 || wc[0].Status != abi.IB_WC_LOC_LEN_ERR || wc[0].ID != 3 {
		t.Errorf("polled %d: %+v", n, wc[0])
	}
}

// TestCleanOnDestroy: destroying a QP removes its CQEs from a CQ it shares
// with another QP, moving the other's down, as __mlx5_cq_clean.
func TestCleanOnDestroy(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	cq := newCQ(t, c, 8, 1)
	a := newQP(t, c, qpOpts{sendWR: 4, sendSGE: 1, qpn: 0xa, sendCQ: cq, noCleanup: true})
	b := newQP(t, c, qpOpts{sendWR: 4, sendSGE: 1, qpn: 0xb, sendCQ: cq})
	for i, q := range []*qp{a, b, a, b} {
		q.sq.Put(&provider.SendWR{ID: uint64(i), Opcode: abi.IB_UVERBS_WR_SEND})
		q.sq.Flush()
		putCQE(cq, uint32(i), cqeFields{sopDropQPN: 0x0a000000 | q.qpn, srqnUIdx: q.rsn, wqeCounter: uint16(i / 2)}.bytes())
	}
	a.sq.Close()
	a.rq.Close()
	if cq.consIndex.Load() != 2 || binary.BigEndian.Uint32(cq.db.b) != 2 {
		t.Errorf("consumer index %d after cleaning two CQEs", cq.consIndex.Load())
	}
	wc := make([]provider.WC, 4)
	if n := cq.Poll(wc); n != 2 || wc[0].ID != 1 || wc[1].ID != 3 {
		t.Errorf("polled %d: %d %d", n, wc[0].ID, wc[1].ID)
	}
	if c.uidx.find(0) != nil {
		t.Error("the destroyed QP keeps its user index")
	}
}

package mlx5_test

import (
	"encoding/binary"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/conformance"
)

// CQE opcodes (the high nibble of op_own) and syndromes, mlx5dv.h.
const (
	cqeReq         = 0x0
	cqeRespWrImm   = 0x1
	cqeRespSend    = 0x2
	cqeRespSendImm = 0x3
	cqeRespSendInv = 0x4
	cqeReqErr      = 0xd
	cqeRespErr     = 0xe
)

// cqe is a CQE the script has the device write, by its fields (mlx5_cqe64,
// mlx5_err_cqe).
type cqe struct {
	opcode    uint8  // op_own >> 4
	sop       uint8  // the WQE's opcode, in sop_drop_qpn (requester)
	wqe       uint16 // wqe_counter
	byteCnt   uint32 // byte_cnt
	uidx      uint32 // srqn_uidx: the QP's user index (CQE version 1)
	imm       uint32 // imm_inval_pkey, big-endian on the wire
	flagsRQPN uint32 // flags_rqpn: sl, GRH bits, source QP
	slid      uint16
	mlPath    uint8
	syndrome  uint8 // error CQEs
	vendor    uint8 // vendor_err_synd
	qpn       uint32
}

// bytes lays the CQE out; its owner bit is the device's business.
func (c cqe) bytes() []byte {
	b := make([]byte, cqeSize)
	be := binary.BigEndian
	b[17] = c.mlPath
	be.PutUint16(b[22:], c.slid)
	be.PutUint32(b[24:], c.flagsRQPN)
	be.PutUint32(b[32:], c.uidx)
	be.PutUint32(b[36:], c.imm)
	be.PutUint32(b[44:], c.byteCnt)
	if c.opcode == cqeReqErr || c.opcode == cqeRespErr {
		b[54], b[55] = c.vendor, c.syndrome
	}
	be.PutUint32(b[56:], uint32(c.sop)<<24|c.qpn&0xffffff)
	be.PutUint16(b[60:], c.wqe)
	b[63] = c.opcode << 4
	return b
}

// mlx5Opcode is libmlx5's table from verbs opcodes to WQE opcodes.
var mlx5Opcode = map[uint32]uint8{
	abi.IB_UVERBS_WR_SEND: 0x0a, abi.IB_UVERBS_WR_SEND_WITH_INV: 0x01, abi.IB_UVERBS_WR_SEND_WITH_IMM: 0x0b,
	abi.IB_UVERBS_WR_RDMA_WRITE: opRDMAWrite, abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM: opRDMAWriteImm,
	abi.IB_UVERBS_WR_RDMA_READ: opRDMARead, abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP: opAtomicCS,
	abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD: opAtomicFA, abi.IB_UVERBS_WR_LOCAL_INV: opUMR,
}

// scripter builds a script on a setup and keeps two views of the queues
// as libmlx5 lays them out (the reference: the Go side must agree or the
// transcripts show it): the device's, so that the CQEs it has the device
// write name real WQEs (a requester CQE the first basic block of a posted
// WQE, a responder CQE of an SRQ a posted SRQ WQE), and the library's,
// which hands WQEs back only when a poll reads their CQE, so that it can
// predict which requests of a batch go in.
type scripter struct {
	s  conformance.Script
	ud bool

	// the QP's state (IB_QPS_*): libmlx5 takes receives from INIT on and
	// sends in RTS only
	state uint32

	// send queue: basic blocks, the capacity in requests, the inline
	// data libmlx5 grants (the WQE's room), the next block, the requests
	// the library has outstanding (in order) and how many of them the
	// device has completed with a CQE
	sqBBs     uint64
	sqMax     int
	inlineMax uint32
	sqPos     uint64
	sqOut     []sqReq
	sqDev     int

	// receive queue: capacity, outstanding, completed by the device
	rqMax, rqOut, rqDev int

	// SRQ: libmlx5's free list of WQEs (next links, head, tail) and the
	// WQEs posted and not completed by the device, in order
	srqNext          []int
	srqHead, srqTail int
	srqOut           []int

	// CQ: its entries, and what each CQE written and not yet polled does
	// to the library's view when a poll (or a cleaning) reads it
	cqN     int
	pending []effect
	staged  effect
}

// effect is what reading a CQE does to libmlx5's queues: a requester CQE
// hands back the send requests up to the one it names (sqPos), a
// responder CQE of the RQ the oldest receive (rq), one of the SRQ its WQE
// (srq >= 0, to the free list's tail).
type effect struct {
	sqPos uint64
	sq    bool
	rq    bool
	srq   int
}

// sqReq is a send request posted and not completed: its first basic
// block and its opcode.
type sqReq struct {
	pos uint64
	op  uint32
}

// newScripter computes the queue geometry libmlx5 gives the setup.
func newScripter(u conformance.Setup) *scripter {
	c := &scripter{s: conformance.Script{Setup: u}, ud: isUD(u.Provider), staged: effect{srq: -1}}
	// Send WQEs: the largest of any opcode the QP type has (RC: a
	// memory window bind, 192 bytes; UD: control and datagram
	// segments, 64), then data segments or inline data; in basic
	// blocks, queue size a power of two.
	overhead := uint32(192)
	if c.ud {
		overhead = 64
	}
	size := overhead + 16*u.MaxSendSGE
	if u.MaxInline > 0 {
		size = max(size, overhead+(4+u.MaxInline+15)&^15)
	}
	size = (size + 63) &^ 63
	c.inlineMax = size - overhead - 4
	wq := pow2(u.SQ * size)
	c.sqBBs, c.sqMax = uint64(wq/sendWQEBB), int(wq/size)
	if u.RQ > 0 {
		stride := pow2(16 * max(u.MaxRecvSGE, 1))
		c.rqMax = int(max(pow2(u.RQ)*stride, 64) / stride)
	}
	if u.SRQ > 0 {
		// Twice the WQEs asked for, and one: the second half is the
		// wait queue (linked, unused here); the first half's last is
		// the tail, which is never posted to until a WQE is freed.
		n := pow2(2*u.SRQ + 1)
		c.srqTail = int(pow2(u.SRQ+1)) - 1
		c.srqNext = make([]int, n)
		for i := range c.srqNext {
			c.srqNext[i] = i + 1
		}
	}
	c.cqN = int(u.CQ) + 1
	c.state = abi.IB_QPS_RTS // where the setup leaves the QP
	return c
}

// wqeBBs is the basic blocks libmlx5's WQE of w takes.
func (c *scripter) wqeBBs(w *provider.SendWR) uint64 {
	size := 1 // control segment, in 16-byte units
	switch {
	case c.ud:
		size += 3
	case w.Opcode == abi.IB_UVERBS_WR_RDMA_WRITE, w.Opcode == abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM,
		w.Opcode == abi.IB_UVERBS_WR_RDMA_READ:
		size++
	case w.Opcode == abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, w.Opcode == abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		size += 2
	case w.Opcode == abi.IB_UVERBS_WR_LOCAL_INV:
		size += 7 // UMR control and mkey context segments
	}
	if w.Flags&abi.IB_SEND_INLINE != 0 && len(w.SGE) > 0 {
		n := 0
		for _, g := range w.SGE {
			n += int(g.Length)
		}
		if n > 0 {
			size += (n + 4 + 15) / 16
		}
	} else {
		for _, g := range w.SGE {
			if g.Length > 0 { // libmlx5 leaves out empty SGEs
				size++
			}
		}
	}
	return uint64((size*16 + 63) / 64)
}

// send posts wrs in one call and returns how many libmlx5 takes.
func (c *scripter) send(wrs ...provider.SendWR) int {
	c.s.Ops = append(c.s.Ops, conformance.Op{Kind: "send", Send: wrs})
	n := 0
	for i := range wrs {
		if len(c.sqOut) >= c.sqMax || c.state != abi.IB_QPS_RTS {
			break
		}
		c.sqOut = append(c.sqOut, sqReq{c.sqPos, wrs[i].Opcode})
		c.sqPos += c.wqeBBs(&wrs[i])
		n++
	}
	return n
}

func (c *scripter) recv(wrs ...provider.RecvWR) int {
	c.s.Ops = append(c.s.Ops, conformance.Op{Kind: "recv", Recv: wrs})
	n := min(len(wrs), c.rqMax-c.rqOut)
	if c.state == abi.IB_QPS_RESET {
		n = 0
	}
	c.rqOut += n
	return n
}

func (c *scripter) srecv(wrs ...provider.RecvWR) int {
	c.s.Ops = append(c.s.Ops, conformance.Op{Kind: "srecv", Recv: wrs})
	n := 0
	for range wrs {
		if c.srqHead == c.srqTail {
			break
		}
		c.srqOut = append(c.srqOut, c.srqHead)
		c.srqHead = c.srqNext[c.srqHead]
		n++
	}
	return n
}

// sqPending and rqPending are the send and receive requests the device
// has not completed yet.
func (c *scripter) sqPending() int { return len(c.sqOut) - c.sqDev }
func (c *scripter) rqPending() int { return c.rqOut - c.rqDev }

// cqe has the device write e, which a reqDone, rqDone or srqDone before
// it chose.
func (c *scripter) cqe(e cqe) {
	e.qpn = confQPN
	c.s.Ops = append(c.s.Ops, conformance.Op{Kind: "cqe", Bytes: e.bytes()})
	c.pending = append(c.pending, c.staged)
	c.staged = effect{srq: -1}
}

// cqOut is the CQEs written and not yet polled.
func (c *scripter) cqOut() int { return len(c.pending) }

// reqDone chooses the k-th send request the device has not completed for
// the next CQE, which completes it and every one before it, and returns
// its wqe_counter and opcode.
func (c *scripter) reqDone(k int) (uint16, uint32) {
	r := c.sqOut[c.sqDev+k]
	c.sqDev += k + 1
	c.staged = effect{sq: true, sqPos: r.pos, srq: -1}
	return uint16(r.pos), r.op
}

// rqDone chooses the oldest receive the device has not completed for the
// next CQE.
func (c *scripter) rqDone() {
	c.rqDev++
	c.staged = effect{rq: true, srq: -1}
}

// srqDone chooses the k-th oldest SRQ receive the device has not
// completed for the next CQE and returns its WQE.
func (c *scripter) srqDone(k int) uint16 {
	i := c.srqOut[k]
	c.srqOut = append(c.srqOut[:k:k], c.srqOut[k+1:]...)
	c.staged = effect{srq: i}
	return uint16(i)
}

// read is libmlx5 reading a CQE: it hands back what the CQE completes.
func (c *scripter) read(e effect) {
	switch {
	case e.sq:
		k := 0
		for k < len(c.sqOut) && c.sqOut[k].pos != e.sqPos {
			k++
		}
		c.sqOut = c.sqOut[k+1:]
		c.sqDev -= k + 1
	case e.rq:
		c.rqOut--
		c.rqDev--
	case e.srq >= 0:
		c.freeSRQ(e.srq)
	}
}

// freeSRQ links WQE i after the free list's tail (mlx5_free_srq_wqe).
func (c *scripter) freeSRQ(i int) {
	c.srqNext[c.srqTail] = i
	c.srqTail = i
}

func (c *scripter) poll(n int) {
	c.s.Ops = append(c.s.Ops, conformance.Op{Kind: "poll", N: uint32(n)})
	for _, e := range c.pending[:min(n, len(c.pending))] {
		c.read(e)
	}
	c.pending = c.pending[min(n, len(c.pending)):]
}

// modify moves the QP to state. A move to RESET removes the QP's CQEs
// from the CQ (mlx5_cq_clean: newest first, freeing the SRQ WQEs of
// responder CQEs; all CQEs are this QP's) and starts its queues over; the
// CQ must not be full (libmlx5's cleaning then leaves the newest CQE).
func (c *scripter) modify(state uint32) {
	c.s.Ops = append(c.s.Ops, conformance.Op{Kind: "modify", N: state})
	c.state = state
	if state != abi.IB_QPS_RESET {
		return
	}
	if len(c.pending) == c.cqN {
		panic("scripter: RESET with a full CQ")
	}
	for i := len(c.pending) - 1; i >= 0; i-- {
		if e := c.pending[i]; e.srq >= 0 {
			c.freeSRQ(e.srq)
		}
	}
	c.pending = nil
	c.sqOut, c.sqDev, c.sqPos = nil, 0, 0
	c.rqOut, c.rqDev = 0, 0
}

func (c *scripter) arm(solicited bool) {
	var n uint32
	if solicited {
		n = 1
	}
	c.s.Ops = append(c.s.Ops, conformance.Op{Kind: "arm", N: n})
}

func (c *scripter) dump(q string) {
	c.s.Ops = append(c.s.Ops, conformance.Op{Kind: "dump", Queue: q})
}

func (c *scripter) script() *conformance.Script { return &c.s }

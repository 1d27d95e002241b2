package mlx5

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
	"github.com/purerdma/purerdma/internal/provider/mmio"
)

// qp is a queue pair: one buffer in user memory holding the receive queue
// and then the send queue, a doorbell record (receive counter, then send
// counter), and the bfreg its send doorbell rings (libmlx5's struct
// mlx5_qp for RC, UC and UD).
type qp struct {
	ctx *context
	typ uint8 // IB_UVERBS_QPT_*
	qpn uint32
	// rsn is the number CQEs name the QP by: its user index with CQE
	// version 1, its QP number with version 0.
	rsn  uint32
	uidx int32 // -1 without one

	buf    []byte // nil when both queues are empty
	db     dbrec
	bf     *bfreg
	dynBF  *bfreg // the dynamic bfreg taken at create, to give back
	inQPs  bool   // stored in the QP-number table (CQE version 0)
	sendCQ *cq
	recvCQ *cq
	srq    *srq

	// sendCQLock and recvCQLock are the public CQs' locks
	// (provider.QPInit), under which their Poll, Take, Release, Arm and
	// Event run: libmlx5's cq->lock, which mlx5_lock_cqs takes to clean
	// the QP's CQEs out of the rings. noLock when the caller has none.
	sendCQLock sync.Locker
	recvCQLock sync.Locker

	maxInline int
	sq        sendQueue
	rq        recvQueue

	// libmlx5 refuses sends until the QP is in RTS and receives until
	// it is in INIT (qp_state_max_gs). The provider learns the state
	// from Modified; until the first call it cannot tell and lets every
	// request through. Read and written under both of the QP's locks.
	stateKnown bool
	sendReady  bool
	recvReady  bool

	closeMu  sync.Mutex
	sqClosed bool
	rqClosed bool
	gone     bool // torn down: its memory is freed
}

// RQ is the driver's receive queue as a type uverbs names: its Put,
// reached through a type switch rather than the provider interface, reads
// the caller's own request, which an interface call would make escape.
type RQ = recvQueue

// recvQueue is a QP's own receive queue (struct mlx5_wq as the RQ).
type recvQueue struct {
	qp      *qp
	off     int // of the queue in qp.buf: always 0, the RQ comes first
	wqeCnt  uint32
	shift   uint
	maxPost uint32
	maxGS   int
	wrid    []uint64

	// head counts the WQEs handed to the device (Flush), tail the ones
	// the device is done with (Poll). Each has one writer; they are
	// atomic because the other side reads them under another lock.
	head atomic.Uint32
	tail atomic.Uint32
	// pending are the WQEs Put since the last Flush.
	pending uint32

	// blocked is q.gone || q.stateKnown && !q.recvReady, kept by
	// closeHalf and Modified (under both of the QP's locks), so that
	// Put's check of the QP's state is one load; base is the queue's
	// first byte, &qp.buf[off], which Put writes through without bounds
	// checks.
	blocked bool
	base    unsafe.Pointer
	// dbRecv is the doorbell record's receive counter, which Flush
	// writes.
	dbRecv *uint32
}

// sqOverhead is the room libmlx5 keeps in every send WQE for the largest
// request of the QP's type besides its data segments (sq_overhead with
// the default operations): for RC and UC a memory window bind's control,
// UMR control, mkey context and KLM segments; for UD the control and
// datagram segments.
func sqOverhead(typ uint8) (int, bool) {
	switch typ {
	case abi.IB_UVERBS_QPT_RC, abi.IB_UVERBS_QPT_UC:
		return 16 + 48 + 64 + 64, true
	case abi.IB_UVERBS_QPT_UD:
		return 16 + avSize, true
	}
	return 0, false
}

// calcSQ sizes the send queue as mlx5_calc_sq_size and sets init's inline
// size to what the WQEs hold. It returns the queue's bytes.
func (q *qp) calcSQ(init *provider.QPInit) (int, error) {
	c := q.ctx
	if init.MaxSendWR == 0 {
		return 0, nil
	}
	overhead, ok := sqOverhead(q.typ)
	if !ok {
		return 0, fmt.Errorf("mlx5: QP type %d: %w", q.typ, provider.ErrUnsupported)
	}
	inlSize := 0
	if init.MaxInline != 0 {
		inlSize = overhead + align(4+int(init.MaxInline), segSize)
	}
	if maxGather := (c.maxSQDescSz - overhead) / segSize; maxGather >= 0 && int(init.MaxSendSGE) > maxGather {
		return 0, fmt.Errorf("mlx5: %d send SGEs, the device takes %d: %w", init.MaxSendSGE, maxGather, provider.ErrInvalid)
	}
	size := overhead + int(init.MaxSendSGE)*segSize
	tot := max(size, inlSize)
	if tot > c.maxSQDescSz {
		return 0, fmt.Errorf("mlx5: send WQE of %d bytes, the device takes %d: %w", tot, c.maxSQDescSz, provider.ErrInvalid)
	}
	wqeSize := align(tot, sendWQEBB)
	if wqeSize > c.maxSQDescSz {
		return 0, fmt.Errorf("mlx5: send WQE of %d bytes, the device takes %d: %w", wqeSize, c.maxSQDescSz, provider.ErrInvalid)
	}
	q.maxInline = wqeSize - overhead - 4
	init.MaxInline = uint32(q.maxInline)
	if int(init.MaxSendWR) > 0x7fffffff/c.maxSQDescSz {
		return 0, fmt.Errorf("mlx5: %d send WRs: %w", init.MaxSendWR, provider.ErrInvalid)
	}
	wqSize := int(roundupPow2(uint64(init.MaxSendWR) * uint64(wqeSize)))
	cnt := wqSize / sendWQEBB
	if cnt > c.maxSendWQEBB {
		return 0, fmt.Errorf("mlx5: send queue of %d blocks, the device takes %d: %w", cnt, c.maxSendWQEBB, provider.ErrInvalid)
	}
	q.sq.wqeCnt = uint32(cnt)
	q.sq.maxGS = int(init.MaxSendSGE)
	q.sq.maxPost = uint32(wqSize / wqeSize)
	return wqSize, nil
}

// calcRQ sizes the receive queue as mlx5_calc_rq_size: a power of two of
// power-of-two WQEs of data segments, at least one send block in all. It
// returns the queue's bytes.
func (q *qp) calcRQ(init *provider.QPInit) (int, error) {
	c := q.ctx
	if init.MaxRecvWR == 0 {
		return 0, nil
	}
	if int64(init.MaxRecvWR) > int64(c.maxRecvWR) {
		return 0, fmt.Errorf("mlx5: %d receive WRs, the device takes %d: %w", init.MaxRecvWR, c.maxRecvWR, provider.ErrInvalid)
	}
	wqeSize := 0
	if !init.SRQ {
		size := segSize * max(int(init.MaxRecvSGE), 1)
		if size > c.maxRQDescSz {
			return 0, fmt.Errorf("mlx5: %d receive SGEs: %w", init.MaxRecvSGE, provider.ErrInvalid)
		}
		wqeSize = int(roundupPow2(uint64(size)))
	}
	if wqeSize > c.maxRQDescSz {
		return 0, fmt.Errorf("mlx5: receive WQE of %d bytes, the device takes %d: %w", wqeSize, c.maxRQDescSz, provider.ErrInvalid)
	}
	wqSize := int(roundupPow2(uint64(init.MaxRecvWR))) * wqeSize
	if wqeSize == 0 {
		return wqSize, nil
	}
	wqSize = max(wqSize, sendWQEBB)
	cnt := wqSize / wqeSize
	q.rq.wqeCnt = uint32(cnt)
	q.rq.shift = ilog32(uint32(wqeSize - 1))
	q.rq.maxPost = 1 << ilog32(uint32(cnt-1))
	q.rq.maxGS = wqeSize / segSize
	return wqSize, nil
}

func align(n, a int) int { return (n + a - 1) &^ (a - 1) }

// CreateQP sizes the queues, allocates their buffer and doorbell record,
// takes a user index (CQE version 1) and, with dynamic UARs, a bfreg, and
// fills CREATE_QP's driver data, as libmlx5's create_qp for an
// ibv_create_qp of RC, UC or UD.
func (c *context) CreateQP(init *provider.QPInit, req []byte) (provider.Pending[provider.Queues], error) {
	if len(req) != createQPSize {
		return nil, fmt.Errorf("mlx5: CREATE_QP driver data is %d bytes, want %d: %w", len(req), createQPSize, provider.ErrInvalid)
	}
	q := &qp{ctx: c, typ: init.Type, uidx: -1}
	q.sq.qp, q.rq.qp = q, q
	q.sq.ud = init.Type == abi.IB_UVERBS_QPT_UD
	var ok bool
	if q.sendCQ, ok = init.SendCQ.(*cq); !ok {
		return nil, fmt.Errorf("mlx5: send CQ: %w", errNotMine)
	}
	if q.recvCQ, ok = init.RecvCQ.(*cq); !ok {
		return nil, fmt.Errorf("mlx5: receive CQ: %w", errNotMine)
	}
	q.sendCQLock, q.recvCQLock = orNoLock(init.SendCQLock), orNoLock(init.RecvCQLock)
	if init.SRQ {
		if q.srq, ok = init.SRQQueue.(*srq); !ok {
			return nil, fmt.Errorf("mlx5: SRQ: %w", errNotMine)
		}
	}
	sqSize, err := q.calcSQ(init)
	if err != nil {
		return nil, err
	}
	rqSize, err := q.calcRQ(init)
	if err != nil {
		return nil, err
	}
	q.sq.off = rqSize
	if q.sq.wqeCnt != 0 {
		q.sq.wrid = make([]uint64, q.sq.wqeCnt)
		q.sq.wqeHead = make([]uint32, q.sq.wqeCnt)
	}
	if q.rq.wqeCnt != 0 {
		q.rq.wrid = make([]uint64, q.rq.wqeCnt)
	}
	if total := sqSize + rqSize; total != 0 {
		if q.buf, err = mem.Alloc(total); err != nil {
			return nil, fmt.Errorf("mlx5: QP buffer: %w", err)
		}
	}
	if q.db, err = c.dbr.alloc(); err != nil {
		q.free()
		return nil, err
	}
	clear(q.db.b)

	cmd := abi.MLX5CreateQP{
		BufAddr:    mem.Addr(q.buf),
		DBAddr:     q.db.addr(),
		SQWQECount: q.sq.wqeCnt,
		RQWQECount: q.rq.wqeCnt,
		RQWQEShift: uint32(q.rq.shift),
		// libmlx5 lets the kernel put small receive payloads (and read
		// and atomic responses) into the CQE unless MLX5_SCATTER_TO_CQE
		// is 0; Poll copies them out.
		Flags: abi.MLX5_QP_FLAG_SCATTER_CQE,
		UIdx:  0xffffff,
	}
	if c.cqeVersion != 0 {
		c.tabMu.Lock()
		idx := c.uidx.freeIndex()
		if idx >= 0 {
			// rsn before the QP is published: Poll reads it.
			q.rsn = uint32(idx)
			c.uidx.store(uint32(idx), q)
		}
		c.tabMu.Unlock()
		if idx < 0 {
			q.free()
			return nil, fmt.Errorf("mlx5: no free user index: %w", provider.ErrFull)
		}
		q.uidx = int32(idx)
		cmd.UIdx = uint32(idx)
	}
	if !c.staticUARs {
		if q.dynBF = c.qpUAR(); q.dynBF == nil {
			q.free()
			return nil, fmt.Errorf("mlx5: no UAR for the QP's doorbell: %w", provider.ErrUnsupported)
		}
		cmd.BfregIndex = q.dynBF.pageID
		cmd.Flags |= abi.MLX5_QP_FLAG_UAR_PAGE_INDEX
	}
	if c.ece {
		cmd.ECEOptions = eceCreateTrigger
	}
	if err := encode(req, &cmd, "CREATE_QP"); err != nil {
		q.free()
		return nil, err
	}
	return &pendingQP{q: q, init: init}, nil
}

type pendingQP struct {
	q    *qp
	init *provider.QPInit
}

// Finish maps the QP to its bfreg and reports the capacities libmlx5
// reports: the send and receive WRs its queues hold and the receive SGEs
// of its WQEs.
func (p *pendingQP) Finish(resp []byte) (provider.Queues, error) {
	q, init, c := p.q, p.init, p.q.ctx
	var r abi.MLX5CreateQPResp
	decode(resp, &r)
	q.qpn = init.QPNum
	if q.uidx < 0 {
		q.rsn = q.qpn
	}
	if c.cqeVersion == 0 && (q.sq.wqeCnt != 0 || q.rq.wqeCnt != 0) {
		c.tabMu.Lock()
		c.qps.store(q.qpn, q)
		c.tabMu.Unlock()
		q.inQPs = true
	}
	bf, err := c.bfregFor(r.BfregIndex, q.dynBF)
	if err != nil {
		return provider.Queues{}, err
	}
	q.bf = bf
	q.rq.maxPost = q.rq.wqeCnt
	if init.SigAll {
		q.sq.sigBits = ctrlCQUpdate
	}
	q.sq.setFMCESE()
	if q.sq.wqeCnt != 0 {
		q.sq.base = unsafe.Pointer(&q.buf[q.sq.off])
	}
	q.sq.dbSend = mem.At[uint32](q.db.b, 4*doorbellSendI)
	q.rq.dbRecv = mem.At[uint32](q.db.b, 4*doorbellRecvI)
	q.sq.setFast()
	if q.rq.wqeCnt != 0 {
		q.rq.base = unsafe.Pointer(&q.buf[q.rq.off])
	}
	init.MaxSendWR = q.sq.maxPost
	init.MaxRecvWR = q.rq.maxPost
	init.MaxRecvSGE = uint32(q.rq.maxGS)
	qs := provider.Queues{SQ: &q.sq}
	if q.srq == nil {
		qs.RQ = &q.rq
	}
	return qs, nil
}

func (p *pendingQP) Abort() { p.q.free() }

// free releases what CreateQP took, in create_qp's unwinding order.
func (q *qp) free() {
	c := q.ctx
	c.putQPUAR(q.dynBF)
	q.dynBF = nil
	if q.uidx >= 0 || q.inQPs {
		c.tabMu.Lock()
		if q.uidx >= 0 {
			c.uidx.clear(uint32(q.uidx))
		}
		if q.inQPs {
			c.qps.clear(q.qpn)
		}
		c.tabMu.Unlock()
		q.uidx, q.inQPs = -1, false
	}
	c.freeMem(q.db, q.buf)
	q.db = dbrec{}
	q.buf = nil
}

// closeHalf closes the send or the receive queue; the QP goes with the
// last of them (the receive queue does not count with an SRQ). The
// kernel's QP is gone by then: its CQEs still in the CQs are removed, and
// the QP leaves the tables before its memory is freed, as in
// mlx5_destroy_qp.
func (q *qp) closeHalf(send bool) error {
	q.closeMu.Lock()
	defer q.closeMu.Unlock()
	if send {
		q.sqClosed = true
	} else {
		q.rqClosed = true
	}
	if !q.sqClosed || (!q.rqClosed && q.srq == nil) || q.gone {
		return nil
	}
	q.gone = true
	q.sq.blocked, q.rq.blocked = true, true
	// Nothing writes through the queues' pointers once the memory goes.
	q.sq.base, q.rq.base, q.sq.dbSend, q.rq.dbRecv = nil, nil, nil, nil
	q.sq.setFast()
	c := q.ctx
	q.lockCQs()
	q.recvCQ.clean(q.rsn, q.srq)
	if q.sendCQ != q.recvCQ {
		q.sendCQ.clean(q.rsn, nil)
	}
	if q.inQPs {
		c.tabMu.Lock()
		c.qps.clear(q.qpn)
		c.tabMu.Unlock()
		q.inQPs = false
	}
	q.unlockCQs()
	if q.uidx >= 0 {
		c.tabMu.Lock()
		c.uidx.clear(uint32(q.uidx))
		c.tabMu.Unlock()
		q.uidx = -1
	}
	c.freeMem(q.db, q.buf)
	q.db = dbrec{}
	q.buf = nil
	c.putQPUAR(q.dynBF)
	q.dynBF = nil
	return nil
}

// lockCQs takes the locks of the QP's CQs in CQ number order
// (mlx5_lock_cqs). They are the public CQs' locks, taken after the QP's
// own (docs/concurrency.md).
func (q *qp) lockCQs() {
	s, r := q.sendCQ, q.recvCQ
	switch {
	case s == r:
		q.sendCQLock.Lock()
	case s.cqn < r.cqn:
		q.sendCQLock.Lock()
		q.recvCQLock.Lock()
	default:
		q.recvCQLock.Lock()
		q.sendCQLock.Lock()
	}
}

func (q *qp) unlockCQs() {
	s, r := q.sendCQ, q.recvCQ
	switch {
	case s == r:
		q.sendCQLock.Unlock()
	case s.cqn < r.cqn:
		q.recvCQLock.Unlock()
		q.sendCQLock.Unlock()
	default:
		q.sendCQLock.Unlock()
		q.recvCQLock.Unlock()
	}
}

// noLock stands for the CQ lock of a caller without public CQs, which
// calls nothing of the CQs concurrently with the QP.
type noLock struct{}

func (noLock) Lock()   {}
func (noLock) Unlock() {}

func orNoLock(l sync.Locker) sync.Locker {
	if l == nil {
		return noLock{}
	}
	return l
}

// Modified tells the QP that MODIFY_QP moved it to state (IB_QPS_*), as
// the part of mlx5_modify_qp after the command: a move to RESET removes
// the QP's CQEs from its CQs and starts its queues and doorbell record
// over, and the state decides whether the queues take requests
// (set_qp_operational_state): receives from INIT on, sends from RTS on,
// neither after RESET. uverbs calls it (provider.StateTracker), holding
// both of the QP's locks, after every MODIFY_QP that set the state.
func (s *sendQueue) Modified(state uint32) {
	q := s.qp
	if q.gone {
		return
	}
	q.stateKnown = true
	switch state {
	case abi.IB_QPS_RESET:
		q.lockCQs()
		q.recvCQ.clean(q.rsn, q.srq)
		if q.sendCQ != q.recvCQ {
			q.sendCQ.clean(q.rsn, nil)
		}
		q.unlockCQs()
		q.sq.head.Store(0)
		q.sq.tail.Store(0)
		q.rq.head.Store(0)
		q.rq.tail.Store(0)
		q.sq.curPost = 0
		putBE32(q.db.b, 4*doorbellRecvI, 0)
		putBE32(q.db.b, 4*doorbellSendI, 0)
		q.sendReady, q.recvReady = false, false
	case abi.IB_QPS_INIT:
		q.recvReady = true
	case abi.IB_QPS_RTS:
		q.sendReady = true
	}
	q.sq.blocked = !q.sendReady
	q.sq.setFast()
	q.rq.blocked = !q.recvReady
}

// The receive queue's errors, made once: Put allocates nothing.
var (
	errRQState  = fmt.Errorf("mlx5: receive on a QP in RESET: %w", provider.ErrInvalid)
	errRQFull   = fmt.Errorf("mlx5: receive queue full: %w", provider.ErrFull)
	errRQSGEs   = fmt.Errorf("mlx5: more SGEs than the receive queue takes: %w", provider.ErrInvalid)
	errRQClosed = fmt.Errorf("mlx5: receive queue: %w", provider.ErrClosed)
)

// acquire pairs with Flush's store of head: what Put wrote for the WQEs
// handed over (the wr_id array) is visible to Poll on another goroutine.
func (r *recvQueue) acquire() { r.head.Load() }

// Put writes a receive WQE: a data segment per SGE of non-zero length,
// and, if there is room, one with the invalid lkey that ends the list
// (mlx5_post_recv).
func (r *recvQueue) Put(wr *provider.RecvWR) error {
	// The tail moves under a concurrent Poll: read once, so that
	// refusal sees the queue as full as the check did.
	next := r.head.Load() + r.pending
	full := next-r.tail.Load() >= r.maxPost
	if r.blocked || full || len(wr.SGE) > r.maxGS {
		return r.refusal(full)
	}
	r.write(wr, next)
	r.pending++
	return nil
}

// Post puts wrs in order, each of at most maxSGE SGEs, and hands the
// ones it put to the device: Put for each and one Flush, in one call,
// which is what uverbs' PostRecv does with it. It returns how many it put
// and the refusal of the next one. A request of more than maxSGE SGEs is
// refused as one of more than the queue takes (uverbs formats its own
// error). Its own loop rather than Put's, with write's body in line: a
// call for each request cost more than the rest of a one-request post,
// and a flag for Put's not publishing cost the loops a register;
// TestRQPostIsPutFlush holds the two to the same bytes.
func (r *recvQueue) Post(wrs []provider.RecvWR, maxSGE int) (int, error) {
	lim := min(maxSGE, r.maxGS)
	// next is the head with the WQEs put so far: the only counter the
	// loop keeps (fewer live values, fewer spills around the SGE loop).
	next := r.head.Load() + r.pending
	n := 0
	var err error
	for ; n < len(wrs); n++ {
		wr := &wrs[n]
		full := next-r.tail.Load() >= r.maxPost
		if r.blocked || full || len(wr.SGE) > lim {
			err = r.refusal(full)
			break
		}
		// write's body, in line: a call for each request gave the loop a
		// frame and its values to spill.
		ind := next & (r.wqeCnt - 1)
		wqe := unsafe.Add(r.base, uintptr(ind)<<(r.shift&63))
		sges := wr.SGE
		d := uintptr(0)
		for i := range sges {
			sg := &sges[i]
			if sg.Length == 0 {
				continue
			}
			storeBE64(unsafe.Add(wqe, d), uint64(sg.Length)<<32|uint64(sg.LKey))
			storeBE64(unsafe.Add(wqe, d+8), sg.Addr)
			d += segSize
		}
		if d != uintptr(r.maxGS)*segSize {
			term := uint64(invalidLKey)
			if littleEndian {
				term = invalidLKey << 40
			}
			*(*uint64)(unsafe.Add(wqe, d)) = term
			*(*uint64)(unsafe.Add(wqe, d+8)) = 0
		}
		*(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(r.wrid)), uintptr(ind)*8)) = wr.ID
		next++
	}
	// head has one writer, this queue's poster: reading it again is
	// reading what it was.
	if head := r.head.Load(); next != head {
		// Flush's work: the counter after the WQEs.
		mem.StoreRelease(&r.head, next)
		r.pending = 0
		mmio.ToDevice()
		*r.dbRecv = bits.ReverseBytes32(next & 0xffff)
	}
	return n, err
}

// write writes wr as the WQE at next, which Put and Post checked: a data
// segment per SGE of non-zero length, each as two 8-byte stores through
// r.base (the checks keep the WQE inside its slot), and, if there is
// room, the invalid lkey that ends the list; and wr's ID.
func (r *recvQueue) write(wr *provider.RecvWR, next uint32) {
	ind := next & (r.wqeCnt - 1)
	// Offsets rather than pointers: the end of the slot may be the end
	// of the buffer.
	wqe := unsafe.Add(r.base, uintptr(ind)<<(r.shift&63)) // shift < 64: no check for a larger one
	// A local copy: the stores through base could alias wr as far as the
	// compiler knows, and would make it reload the slice each pass.
	sges := wr.SGE
	d := uintptr(0)
	for i := range sges {
		sg := &sges[i]
		if sg.Length == 0 {
			continue
		}
		storeBE64(unsafe.Add(wqe, d), uint64(sg.Length)<<32|uint64(sg.LKey))
		storeBE64(unsafe.Add(wqe, d+8), sg.Addr)
		d += segSize
	}
	if d != uintptr(r.maxGS)*segSize {
		// The terminator's big-endian words as native constants: the
		// compiler does not fold a byte swap of a constant.
		term := uint64(invalidLKey)
		if littleEndian {
			term = invalidLKey << 40 // bits.ReverseBytes64(invalidLKey)
		}
		*(*uint64)(unsafe.Add(wqe, d)) = term
		*(*uint64)(unsafe.Add(wqe, d+8)) = 0
	}
	// ind < wqeCnt, the array's length: no bounds check.
	*(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(r.wrid)), uintptr(ind)*8)) = wr.ID
}

// refusal is the error of a request Put refuses, the first of
// mlx5_post_recv's checks that it fails.
func (r *recvQueue) refusal(full bool) error {
	q := r.qp
	switch {
	case q.gone:
		return errRQClosed
	case full:
		return errRQFull
	case q.stateKnown && !q.recvReady:
		return errRQState
	}
	return errRQSGEs
}

// Flush hands the WQEs Put since the last Flush to the device: the
// counter in the doorbell record's first word, after the WQEs.
func (r *recvQueue) Flush() error {
	if r.pending == 0 {
		return nil
	}
	head := r.head.Load() + r.pending
	mem.StoreRelease(&r.head, head)
	r.pending = 0
	mmio.ToDevice()
	*r.dbRecv = bits.ReverseBytes32(head & 0xffff)
	return nil
}

// Close closes the receive half of the QP.
func (r *recvQueue) Close() error { return r.qp.closeHalf(false) }

// copyToRecvWQE scatters a receive payload the device put in the CQE into
// the WQE's buffers (mlx5_copy_to_recv_wqe).
func (q *qp) copyToRecvWQE(idx uint32, data []byte, size int) uint32 {
	r := &q.rq
	base := r.off + int(idx)<<r.shift
	n := 1 << (r.shift - 4)
	return q.ctx.copyToScat(q.buf, base, base+n*segSize, n, data, &size)
}

// setDataSeg writes a data segment (set_data_ptr_seg), as two 8-byte
// big-endian stores: byte count and lkey, then the address.
func setDataSeg(buf []byte, off int, length, lkey uint32, addr uint64) {
	d := mem.At[seg16](buf, off)
	d.hi.set(uint64(length)<<32 | uint64(lkey))
	d.lo.set(addr)
}

package uverbs

import (
	"errors"
	"fmt"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mlx5"
	"github.com/purerdma/purerdma/internal/provider/rxe"
	"github.com/purerdma/purerdma/internal/provider/siw"
	"github.com/purerdma/purerdma/internal/verbs"
)

// PostSend posts send work requests in order (ibv_post_send) and rings the
// doorbell once for all of them. It returns how many it posted: on an
// error, the requests before the failing one are posted, the rest not,
// like ibv_post_send's bad_wr. It does not allocate and makes at most one
// system call (the doorbell, on drivers that need one).
//
//go:nosplit
func (qp *QP) PostSend(wrs []SendWR) (int, error) {
	// No stack check (nosplit): docs/architecture.md, The data path.
	if qp == nil {
		return 0, ErrClosed
	}
	// The lock free and no owner: one CAS. Anything else (the lock
	// held, an owner's gate to shut) goes out of line, so that no call
	// but the driver's is on this path: around a call, the compiler
	// keeps on the stack what lives across it (Go has no callee-saved
	// registers), and Lock's miss made it spill the arguments here.
	if !qp.sendMu.TryLockFree() {
		return qp.postSendSlow(wrs)
	}
	// No defer: it costs more than the rest of a one-request post's
	// locking, and nothing under the lock panics.
	//
	// The drivers of this module read the caller's requests themselves
	// (provider.SendWR has SendWR's layout), called by their concrete
	// types (setSQ), found once per call: an interface call would make
	// the requests escape, and each test is a load and a compare with
	// nil. Their PutPlain takes a run of common requests and
	// rings the doorbell in one call; a batch it does not finish goes on
	// in postRest, out of line, as do all requests on other drivers.
	// SendQueue.Post has the same lines: a shared function's call would
	// cost a tenth of a one-request post. Each branch tests its driver's
	// result itself: tested after the branches join, the compiler
	// reloaded wrs and qp after every driver's call, where here only qp
	// comes back from the stack, at the join. The test is of the error
	// alone: a PutPlain that stopped short says so with
	// provider.ErrStop, so the batch's length need not outlive the call.
	// A destroyed QP has no driver by type (unmap, under this lock), so
	// its closed check is postOther's, off the drivers' way.
	var n int
	var err error
	if sq := qp.mlx5SQ; sq != nil {
		if n, err = sq.PutPlain(sendViews(wrs)); err != nil {
			n, err = qp.postRest(wrs, n, err)
		}
	} else if sq := qp.rxeSQ; sq != nil {
		if n, err = sq.PutPlain(sendViews(wrs)); err != nil {
			n, err = qp.postRest(wrs, n, err)
		}
	} else if sq := qp.siwSQ; sq != nil {
		if n, err = sq.PutPlain(sendViews(wrs)); err != nil {
			n, err = qp.postRest(wrs, n, err)
		}
	} else {
		n, err = qp.postOther(wrs)
	}
	qp.sendMu.UnlockFree()
	return n, err
}

// postOther is PostSend, under the lock, for a QP without a driver by
// type: a destroyed one, or one whose driver is reached through
// provider.SQ only (tests' fakes).
func (qp *QP) postOther(wrs []SendWR) (int, error) {
	if qp.closed.Load() {
		return 0, ErrClosed
	}
	if len(wrs) == 0 {
		return 0, nil
	}
	return qp.postRest(wrs, 0, nil)
}

// postSendSlow is PostSend when the lock is held or the send side has an
// owner (its gate is shut by Lock): it waits, then posts as PostSend
// does, with the same lines, so that both put the same bytes.
//
//go:noinline
func (qp *QP) postSendSlow(wrs []SendWR) (int, error) {
	qp.sendMu.Lock()
	defer qp.sendMu.Unlock()
	var n int
	var err error
	if sq := qp.mlx5SQ; sq != nil {
		n, err = sq.PutPlain(sendViews(wrs))
	} else if sq := qp.rxeSQ; sq != nil {
		n, err = sq.PutPlain(sendViews(wrs))
	} else if sq := qp.siwSQ; sq != nil {
		n, err = sq.PutPlain(sendViews(wrs))
	} else {
		return qp.postOther(wrs)
	}
	if err != nil {
		n, err = qp.postRest(wrs, n, err)
	}
	return n, err
}

// setSQ sets the QP's send queue and, for the data path, its concrete
// type: the only place sq is set, so that the two agree.
func (qp *QP) setSQ(sq provider.SQ) {
	qp.sq = sq
	qp.mlx5SQ, _ = sq.(*mlx5.SQ)
	qp.rxeSQ, _ = sq.(*rxe.SQ)
	qp.siwSQ, _ = sq.(*siw.SQ)
}

// setRQ sets the receive queue and, for the data path, its concrete
// type: the only place rq is set, so that the two agree.
func (r *recvSide) setRQ(rq provider.RQ) {
	r.rq = rq
	r.mlx5, _ = rq.(*mlx5.RQ)
	r.mlx5SRQ, _ = rq.(*mlx5.SRQ)
	r.rxe, _ = rq.(*rxe.RQ)
	r.siw, _ = rq.(*siw.RQ)
}

// parkRecv sets whether the QP's receive data path reaches its driver
// by type: not while the QP is in RESET or closed (off), when
// PostRecv's way goes to recvOther, which refuses; the drivers' way then
// needs no check of the state. Hold the receive lock, or have the QP to
// oneself (CreateQP).
func (qp *QP) parkRecv(off bool) {
	r := &qp.recv
	if off {
		r.mlx5, r.mlx5SRQ, r.rxe, r.siw = nil, nil, nil, nil
		return
	}
	r.setRQ(r.rq)
}

// setState records the QP's state, with whether its receive data path
// reaches the driver (parkRecv), under the receive lock.
func (qp *QP) setState(s QPState) {
	qp.recvMu.Lock()
	qp.state.Store(uint32(s))
	qp.parkRecv(s == QPSReset || qp.closed.Load())
	qp.recvMu.Unlock()
}

// postRest goes on with wrs from request n, after a driver's PutPlain
// stopped there (ferr provider.ErrStop) or failed (ferr: its doorbell's
// failure, which ends the post): the request PutPlain left goes alone,
// the rest to PutPlain again. On other drivers, where PutPlain is not,
// every request goes alone. Then it flushes what is left, which after a
// PutPlain that finished is nothing.
//
//go:noinline
func (qp *QP) postRest(wrs []SendWR, n int, ferr error) (int, error) {
	var err error
	if ferr == provider.ErrStop {
		ferr = nil
	}
	for ferr == nil && n < len(wrs) {
		if wr := &wrs[n]; qp.plain(wr) {
			err = qp.putDirect(wr)
		} else {
			err = qp.putSendChecked(wr)
		}
		if err != nil {
			break
		}
		n++
		var k int
		if sq := qp.mlx5SQ; sq != nil {
			k, ferr = sq.PutPlain(sendViews(wrs[n:]))
		} else if sq := qp.rxeSQ; sq != nil {
			k, ferr = sq.PutPlain(sendViews(wrs[n:]))
		} else if sq := qp.siwSQ; sq != nil {
			k, ferr = sq.PutPlain(sendViews(wrs[n:]))
		}
		if ferr == provider.ErrStop {
			ferr = nil
		}
		n += k
	}
	if ferr == nil {
		ferr = qp.sq.Flush()
	}
	if err != nil || ferr != nil {
		err = sendErr(qp, wrs, n, err, ferr)
	}
	return n, err
}

// sendErr is postRest's error: the refusal of request n, the doorbell's
// failure, or both. Out of line: the data path does not format.
//
//go:noinline
func sendErr(qp *QP, wrs []SendWR, n int, err, ferr error) error {
	if err != nil {
		err = fmt.Errorf("uverbs: post send: work request %d (%s): %w", n, wrs[n].Opcode, putErr(err, "send", qp.cap.MaxSendWR))
	}
	if ferr != nil {
		err = errors.Join(err, fmt.Errorf("uverbs: post send: doorbell: %w", verbs.Public(ferr)))
	}
	return err
}

// errNoReads refuses an RDMA read or atomic on a QP whose max_rd_atomic
// is 0. Such a request needs one of the QP's initiator slots for reads
// and atomics, and with none it would wait for ever: rxe's requester
// holds it back without an error, so the read never completes. Those
// are the opcodes that take a slot in rxe (check_init_depth: reads and
// atomics) and in the IB spec. RDMA FLUSH and ATOMIC WRITE use the
// responder's resources but no initiator slot in rxe, which sends them
// with max_rd_atomic 0, so they are not refused; the library has no
// masked atomics. The error is made once: the post path does not
// allocate.
var errNoReads = invalid("the QP may have no RDMA read or atomic outstanding (max_rd_atomic 0), so this one would never complete: " +
	"connect with rdmacm.ConnParam.InitiatorDepth above 0 (nil or rdmacm.MaxInitiatorDepth: the device's maximum; " +
	"the peer's ResponderResources limits it), or set QPAttr.MaxRdAtomic when moving a QP connected by hand to RTS")

// plain reports whether wr passes checkSend with nothing but what is
// tested here: an opcode the QP takes as it is (plainOps), known flags
// but inline, SGEs the QP takes, and no address handle or window, which
// only the copy carries to the driver. The rest go through
// putSendChecked.
func (qp *QP) plain(wr *SendWR) bool {
	return uint(len(wr.SGE)) <= uint(len(qp.ssge)) && wr.Flags&^(sendFlags&^SendInline) == 0 &&
		wr.AH == nil && wr.MW == nil && wr.Opcode < 32 && qp.plainOps.Load()>>wr.Opcode&1 != 0
}

// plainOpsFor are the opcodes that a QP of type typ takes with no check
// beyond plain's, as bits: checkSend's cases that look at nothing else.
// A UD QP and an sq_sig_all QP have none: their requests need the copy
// (the address handle; the signaled flag). Reads are plain while the QP
// may have them outstanding (noReads false).
func plainOpsFor(typ QPType, sigAll, noReads bool) uint32 {
	if typ == UD || sigAll {
		return 0
	}
	ops := uint32(1)<<WRSend | 1<<WRSendWithImm | 1<<WRSendWithInv | 1<<WRLocalInv |
		1<<WRRDMAWrite | 1<<WRRDMAWriteWithImm
	if typ == RC && !noReads {
		ops |= 1 << WRRDMARead
	}
	return ops
}

// setNoReads records whether the QP may have no RDMA read or atomic
// outstanding (errNoReads), and what that makes plain.
func (qp *QP) setNoReads(none bool) {
	qp.noReads.Store(none)
	ops := plainOpsFor(qp.typ, qp.sigAll, none)
	qp.plainOps.Store(ops)
	if sq, ok := qp.sq.(interface{ SetPlainOps(uint32) }); ok {
		sq.SetPlainOps(ops) // its batch path takes these
	}
}

// putSendChecked puts a request plain does not pass: checkSend's checks,
// then putDirect, or the driver reads the QP's scratch copy when the
// request needs what only the copy sets: an address handle's vector, a
// window's rkey, or the signaled flag of sq_sig_all. It is out of line:
// the common requests never come here.
//
//go:noinline
func (qp *QP) putSendChecked(wr *SendWR) error {
	if err := qp.checkSend(wr); err != nil {
		return err
	}
	if wr.AH == nil && wr.MW == nil && (!qp.sigAll || wr.Flags&SendSignaled != 0) {
		return qp.putDirect(wr)
	}
	return qp.sq.Put(qp.copySend(wr))
}

// putDirect puts one checked request that needs no copy: the drivers of
// this module read it where it is, others get the copy.
func (qp *QP) putDirect(wr *SendWR) error {
	if sq := qp.mlx5SQ; sq != nil {
		return sq.Put(sendView(wr))
	} else if sq := qp.rxeSQ; sq != nil {
		return sq.Put(sendView(wr))
	} else if sq := qp.siwSQ; sq != nil {
		return sq.Put(sendView(wr))
	}
	return qp.sq.Put(qp.copySend(wr))
}

// copySend copies wr into the QP's scratch request, with what the driver
// reads beyond the caller's fields: the address handle's vector, the
// window's rkey, sq_sig_all's signaled flag. The scratch request is set
// field by field: a composite literal would be built in a temporary and
// copied, and SGE, a pointer, would be written twice.
func (qp *QP) copySend(wr *SendWR) *provider.SendWR {
	w := &qp.swr
	w.ID = wr.ID
	w.Opcode = uint32(wr.Opcode)
	w.Flags = uint32(wr.Flags)
	w.Imm = wr.Imm
	w.RemoteAddr = wr.RemoteAddr
	w.RKey = wr.RKey
	w.CompareAdd = wr.CompareAdd
	w.Swap = wr.Swap
	w.Length = wr.Length
	w.FlushType = uint8(wr.FlushType)
	w.FlushLevel = uint8(wr.FlushLevel)
	w.AtomicData = wr.AtomicData
	w.AH = nil
	w.RemoteQPN = wr.RemoteQPN
	w.RemoteQKey = wr.RemoteQKey
	w.BindAddr, w.BindLength, w.BindLKey, w.BindAccess, w.MWRKey = 0, 0, 0, 0, 0
	if qp.sigAll {
		w.Flags |= abi.IB_SEND_SIGNALED
	}
	sge := qp.ssge[:len(wr.SGE)]
	for i, s := range wr.SGE {
		sge[i] = provider.SGE(s)
	}
	w.SGE = sge
	if wr.Opcode == WRBindMW {
		w.BindAddr, w.BindLength, w.BindLKey = wr.Bind.Addr, wr.Bind.Length, wr.Bind.LKey
		w.BindAccess, w.MWRKey = uint32(wr.Bind.Access), wr.MW.rkey
	}
	if qp.typ == UD {
		// Copied, not pointed to: a pointer loaded from *wr and kept in
		// the QP would make everything wr points to escape, the
		// caller's SGE array included.
		qp.sah = wr.AH.av
		w.AH = &qp.sah
	}
	return w
}

// checkSend refuses what the QP cannot post, before any driver sees it.
func (qp *QP) checkSend(wr *SendWR) error {
	if len(wr.SGE) > len(qp.ssge) {
		return invalid("%d SGEs, the QP takes %d", len(wr.SGE), len(qp.ssge))
	}
	if wr.Flags&^sendFlags != 0 {
		return invalid("unknown send flags %#x", uint32(wr.Flags&^sendFlags))
	}
	if wr.Flags&SendInline != 0 {
		total := 0
		for _, s := range wr.SGE {
			total += int(s.Length)
		}
		if total > qp.cap.MaxInlineData {
			return invalid("%d inline bytes, the QP takes %d", total, qp.cap.MaxInlineData)
		}
	}
	switch wr.Opcode {
	case WRAtomicCmpAndSwp, WRAtomicFetchAndAdd:
		if qp.typ != RC {
			return invalid("atomics need an RC QP")
		}
		if len(wr.SGE) != 1 || wr.SGE[0].Length != 8 || wr.RemoteAddr%8 != 0 {
			return invalid("an atomic takes one 8-byte SGE and an 8-byte aligned remote address")
		}
		if qp.noReads.Load() {
			return errNoReads
		}
	case WRRDMAWrite, WRRDMAWriteWithImm, WRRDMARead:
		if qp.typ == UD {
			return invalid("RDMA needs a connected QP")
		}
		if wr.Opcode == WRRDMARead {
			if qp.typ != RC || wr.Flags&SendInline != 0 {
				return invalid("RDMA read needs an RC QP and cannot be inline")
			}
			if qp.noReads.Load() {
				return errNoReads
			}
		}
	case WRFlush:
		if qp.typ != RC || len(wr.SGE) != 0 || wr.Flags&SendInline != 0 {
			return invalid("RDMA flush needs an RC QP and takes no SGEs")
		}
		if wr.FlushType == 0 || wr.FlushType&^(FlushGlobal|FlushPersistent) != 0 || wr.FlushLevel > FlushMR {
			return invalid("flush type %s, level %s", wr.FlushType, wr.FlushLevel)
		}
		// Checked here because a kernel without the operation fails
		// the QP instead of the request.
		if have := flushTypes(qp.caps); wr.FlushType&^have != 0 {
			return fmt.Errorf("the device has no RDMA FLUSH of type %s (rxe has it since Linux 6.2): %w",
				wr.FlushType&^have, ErrUnsupported)
		}
	case WRAtomicWrite:
		if qp.typ != RC || len(wr.SGE) != 0 || wr.Flags&SendInline != 0 || wr.RemoteAddr%8 != 0 {
			return invalid("an atomic write needs an RC QP and an 8-byte aligned remote address, and takes no SGEs")
		}
		if qp.caps&DeviceAtomicWrite == 0 {
			return fmt.Errorf("the device has no RDMA ATOMIC WRITE (rxe has it since Linux 6.2): %w", ErrUnsupported)
		}
	case WRBindMW:
		if qp.typ != RC && qp.typ != UC || len(wr.SGE) != 0 || wr.Flags&SendInline != 0 {
			return invalid("a memory window bind needs an RC or UC QP and takes no SGEs")
		}
		if wr.MW == nil {
			return invalid("a memory window bind without a window")
		}
		if wr.MW.gone.Load() {
			return fmt.Errorf("memory window: %w", ErrClosed)
		}
		if wr.Bind.Access&ZeroBased != 0 || wr.Bind.Access&^(RemoteRead|RemoteWrite|RemoteAtomic) != 0 {
			// ZeroBased as rdma-core's rxe_bind_mw refuses it.
			return invalid("memory window access %#x", uint32(wr.Bind.Access))
		}
	case WRSend, WRSendWithImm, WRSendWithInv, WRLocalInv:
	default:
		return invalid("opcode %s", wr.Opcode)
	}
	if qp.typ == UD && wr.AH == nil {
		return invalid("a UD send needs an address handle")
	}
	return nil
}

// putErr is a provider's refusal of a work request as the public error of
// its kind (verbs.Public); a full queue says how much it holds.
func putErr(err error, queue string, size int) error {
	if errors.Is(err, provider.ErrFull) {
		return fmt.Errorf("%s queue of %d holds no more: %w", queue, size, verbs.Public(err))
	}
	return verbs.Public(err)
}

// PostRecv posts receive work requests in order (ibv_post_recv), with the
// same partial-success rule as PostSend. A QP with an SRQ takes its
// receive work from the SRQ instead. It does not allocate.
//
// It calls the driver itself, by its concrete type, rather than through
// recvSide.post: one call level less, each level a prologue and the
// spills around its calls (Go has no callee-saved registers); for the
// same reason it is not a wrapper of the locked body. The driver's batch
// takes the caller's requests (provider.RecvWR has RecvWR's layout),
// puts and publishes them, checking uverbs' SGE limit with its own;
// recvSide.err tells the two refusals apart. The driver is found by its
// concrete type (setRQ), a load and a compare with nil each. As in
// PostSend, the lock is one CAS, anything else out of line
// (postRecvSlow), and each driver's branch looks at its own result, so
// that little lives across the driver's call.
//
//go:nosplit
func (qp *QP) PostRecv(wrs []RecvWR) (int, error) {
	// No stack check (nosplit): docs/architecture.md, The data path.
	if qp == nil {
		return 0, ErrClosed
	}
	if !qp.recvMu.TryLockFree() {
		return qp.postRecvSlow(wrs)
	}
	// The QP has its receive driver by type only while it takes receive
	// work (parkRecv: not in RESET, not closed), so the drivers' way has
	// no check of its own; recvOther has them.
	var n int
	var err error
	if q := qp.recv.mlx5; q != nil {
		if n, err = q.Post(recvViews(wrs), len(qp.recv.sge)); err != nil {
			err = qp.recv.err(wrs, n, err)
		}
	} else if q := qp.recv.rxe; q != nil {
		if n, err = q.Post(recvViews(wrs), len(qp.recv.sge)); err != nil {
			err = qp.recv.err(wrs, n, err)
		}
	} else if q := qp.recv.siw; q != nil {
		if n, err = q.Post(recvViews(wrs), len(qp.recv.sge)); err != nil {
			err = qp.recv.err(wrs, n, err)
		}
	} else {
		return qp.recvOther(wrs, false)
	}
	qp.recvMu.UnlockFree()
	return n, err
}

// postRecvSlow is PostRecv when the lock is held or the receive side has
// an owner (its gate is shut by Lock): it waits, then posts as PostRecv
// does, with the same lines, so that both put the same bytes.
//
//go:noinline
func (qp *QP) postRecvSlow(wrs []RecvWR) (int, error) {
	qp.recvMu.Lock()
	r := &qp.recv
	var n int
	var err error
	if q := r.mlx5; q != nil {
		n, err = q.Post(recvViews(wrs), len(r.sge))
	} else if q := r.rxe; q != nil {
		n, err = q.Post(recvViews(wrs), len(r.sge))
	} else if q := r.siw; q != nil {
		n, err = q.Post(recvViews(wrs), len(r.sge))
	} else {
		return qp.recvOther(wrs, false)
	}
	if err != nil {
		err = r.err(wrs, n, err)
	}
	qp.recvMu.Unlock()
	return n, err
}

// postRecvOwned is PostRecv for the receive side's owner, inside the
// lock's gate (RecvQueue.Post). A copy rather than a flag for PostRecv:
// the flag cost each post about ten instructions (its spill, its tests,
// and the registers the compiler gave it). TestPostRecvErrors runs both.
//
//go:nosplit
func (qp *QP) postRecvOwned(wrs []RecvWR) (int, error) {
	// No stack check (nosplit): docs/architecture.md, The data path.
	if qp == nil || !qp.recvMu.Enter() {
		// The QP is changing or gone, or the RecvQueue released: the
		// locked way waits or says so.
		return qp.PostRecv(wrs)
	}
	// PostRecv's lines (see there for the missing checks).
	var n int
	var err error
	if q := qp.recv.mlx5; q != nil {
		if n, err = q.Post(recvViews(wrs), len(qp.recv.sge)); err != nil {
			err = qp.recv.err(wrs, n, err)
		}
	} else if q := qp.recv.rxe; q != nil {
		if n, err = q.Post(recvViews(wrs), len(qp.recv.sge)); err != nil {
			err = qp.recv.err(wrs, n, err)
		}
	} else if q := qp.recv.siw; q != nil {
		if n, err = q.Post(recvViews(wrs), len(qp.recv.sge)); err != nil {
			err = qp.recv.err(wrs, n, err)
		}
	} else {
		return qp.recvOther(wrs, true)
	}
	qp.recvMu.Leave()
	return n, err
}

// recvOther is PostRecv, under the lock (owned: inside the gate), for a
// QP without a receive driver by type: one that takes no receive work
// now (RESET, closed, or on an SRQ), or whose driver is reached through
// provider.RQ only (tests' fakes). It gives the lock back, or leaves the
// gate. Out of line: the data path does not come here.
//
//go:noinline
func (qp *QP) recvOther(wrs []RecvWR, owned bool) (int, error) {
	if qp.closed.Load() || QPState(qp.state.Load()) == QPSReset || qp.recv.rq == nil {
		return qp.recvRefusedUnlock(wrs, owned)
	}
	n, err := qp.recv.postCopy(wrs)
	if err != nil {
		err = qp.recv.err(wrs, n, err)
	}
	if owned {
		qp.recvMu.Leave()
	} else {
		qp.recvMu.Unlock()
	}
	return n, err
}

// recvRefusedUnlock is PostRecv's and postRecvOwned's refusal of a QP
// that takes no receive work now: it undoes the Lock or Enter, and says
// why (the owner through the locked way). Out of line: the data path does not refuse.
//
//go:noinline
func (qp *QP) recvRefusedUnlock(wrs []RecvWR, owned bool) (int, error) {
	if owned {
		qp.recvMu.Leave()
		return qp.PostRecv(wrs) // the locked way says why
	}
	err := qp.recvRefused()
	qp.recvMu.Unlock()
	return 0, err
}

// recvRefused says why the QP takes no receive work now. Hold the
// receive lock.
func (qp *QP) recvRefused() error {
	switch {
	case qp.closed.Load():
		return ErrClosed
	case qp.recv.rq == nil:
		return invalid("uverbs: post recv: the QP receives from an SRQ")
	default:
		return invalid("uverbs: post recv: the QP is in RESET")
	}
}

// recvSide is a receive queue as PostRecv sees it, a QP's or an SRQ's:
// the driver's queue, a scratch request and SGEs for drivers outside this
// module, and the queue's size for errors.
type recvSide struct {
	rq provider.RQ // set by setRQ, with the fields below
	// rq by its concrete type when it is one of this module's drivers',
	// else nil, as QP.mlx5SQ and the others are for the send queue.
	mlx5    *mlx5.RQ
	mlx5SRQ *mlx5.SRQ
	rxe     *rxe.RQ // a QP's or an SRQ's
	siw     *siw.RQ // a QP's or an SRQ's
	wr      provider.RecvWR
	sge     []provider.SGE
	size    int
}

// post puts wrs on the queue and publishes what it put, as PostRecv
// does: an SRQ's post (mlx5's SRQ is a type of its own, rxe's and siw's
// are their receive queues). The drivers of this module take the caller's
// requests themselves (provider.RecvWR has RecvWR's layout) in one call
// that puts and publishes them all, called by their concrete types so
// that the requests do not escape; another driver gets a copy of each in
// the scratch request (postCopy). A driver's batch checks uverbs' SGE
// limit with its own, so a request is checked once; err tells the two
// refusals apart.
func (r *recvSide) post(wrs []RecvWR) (int, error) {
	var n int
	var err error
	// The driver by its concrete type (setRQ): each test is a load and
	// a compare with nil.
	if q := r.mlx5SRQ; q != nil {
		n, err = q.Post(recvViews(wrs), len(r.sge))
	} else if q := r.rxe; q != nil { // rxe's SRQ
		n, err = q.Post(recvViews(wrs), len(r.sge))
	} else if q := r.siw; q != nil { // siw's SRQ
		n, err = q.Post(recvViews(wrs), len(r.sge))
	} else {
		n, err = r.postCopy(wrs)
	}
	if err != nil {
		err = r.err(wrs, n, err)
	}
	return n, err
}

// postCopy is post and PostRecv for a driver outside this module: Put of
// a copy of each request, then Flush. Out of line: the drivers of this
// module do not need its frame.
//
//go:noinline
func (r *recvSide) postCopy(wrs []RecvWR) (int, error) {
	maxSGE := len(r.sge)
	n := 0
	var err error
	for ; n < len(wrs); n++ {
		if wr := &wrs[n]; len(wr.SGE) > maxSGE {
			err = errRecvSGEs
		} else {
			err = putRecvCopy(r.rq, wr, &r.wr, r.sge)
		}
		if err != nil {
			break
		}
	}
	if n > 0 {
		if ferr := r.rq.Flush(); ferr != nil {
			err = &flushErr{err, ferr}
		}
	}
	return n, err
}

// flushErr is postCopy's refusal of a request (nil if none) with the
// driver's failure to publish the ones before it, for recvSide.err.
type flushErr struct{ put, flush error }

func (e *flushErr) Error() string { return errors.Join(e.put, e.flush).Error() }

// errRecvSGEs marks a receive request with more SGEs than the queue takes;
// recvSide.err says how many.
var errRecvSGEs = errors.New("uverbs: too many SGEs")

// err is post's and PostRecv's error: the refusal of request n, the
// queue's failure to publish the ones before it (postCopy's flushErr),
// or both. Out of line: the data path does not format.
//
//go:noinline
func (r *recvSide) err(wrs []RecvWR, n int, err error) error {
	var ferr error
	if f, ok := err.(*flushErr); ok {
		err, ferr = f.put, f.flush
	}
	switch {
	case err == errRecvSGEs || err != nil && len(wrs[n].SGE) > len(r.sge):
		// A driver's batch refuses a request past uverbs' limit as one
		// past its own: uverbs' limit is the one to report.
		err = invalid("uverbs: post recv: work request %d: %d SGEs, the queue takes %d", n, len(wrs[n].SGE), len(r.sge))
	case err != nil:
		err = fmt.Errorf("uverbs: post recv: work request %d: %w", n, putErr(err, "receive", r.size))
	}
	if ferr != nil {
		err = errors.Join(err, fmt.Errorf("uverbs: post recv: %w", verbs.Public(ferr)))
	}
	return err
}

// putRecvCopy puts wr on a driver outside this module through the
// scratch request w and SGEs sge.
func putRecvCopy(rq provider.RQ, wr *RecvWR, w *provider.RecvWR, sge []provider.SGE) error {
	ws := sge[:len(wr.SGE)]
	for j, s := range wr.SGE {
		ws[j] = provider.SGE(s)
	}
	w.ID = wr.ID
	w.SGE = ws
	return rq.Put(w)
}

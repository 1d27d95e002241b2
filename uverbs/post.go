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
func (qp *QP) PostSend(wrs []SendWR) (int, error) {
	if qp == nil {
		return 0, ErrClosed
	}
	// No defer: it costs more than the rest of a one-request post's
	// locking, and nothing under the lock panics.
	qp.sendMu.Lock()
	n, err := qp.postSendLocked(wrs)
	qp.sendMu.Unlock()
	return n, err
}

// postSendLocked is PostSend under the send lock.
func (qp *QP) postSendLocked(wrs []SendWR) (int, error) {
	if qp.closed.Load() {
		return 0, ErrClosed
	}
	n := 0
	var err error
	for i := range wrs {
		if err = qp.putSend(&wrs[i]); err != nil {
			err = fmt.Errorf("uverbs: post send: work request %d (%s): %w", i, wrs[i].Opcode, err)
			break
		}
		n++
	}
	if n > 0 {
		if ferr := qp.sq.Flush(); ferr != nil {
			err = errors.Join(err, fmt.Errorf("uverbs: post send: doorbell: %w", verbs.Public(ferr)))
		}
	}
	return n, err
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

func (qp *QP) putSend(wr *SendWR) error {
	if err := qp.checkSend(wr); err != nil {
		return err
	}
	// The drivers of this module read the caller's request itself
	// (provider.SendWR has SendWR's layout), called by their concrete
	// types (an interface call would make the request escape), unless it
	// needs what only the copy sets: an address handle's vector, a
	// window's rkey, or the signaled flag of sq_sig_all.
	var err error
	direct := wr.AH == nil && wr.MW == nil && (!qp.sigAll || wr.Flags&SendSignaled != 0)
	if direct {
		switch sq := qp.sq.(type) {
		case *mlx5.SQ:
			err = sq.Put(sendView(wr))
		case *rxe.SQ:
			err = sq.Put(sendView(wr))
		case *siw.SQ:
			err = sq.Put(sendView(wr))
		default:
			direct = false
		}
	}
	if !direct {
		err = qp.sq.Put(qp.copySend(wr))
	}
	if err != nil {
		return putErr(err, "send", qp.cap.MaxSendWR)
	}
	return nil
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
func (qp *QP) PostRecv(wrs []RecvWR) (int, error) {
	if qp == nil {
		return 0, ErrClosed
	}
	qp.recvMu.Lock()
	n, err := qp.postRecvLocked(wrs)
	qp.recvMu.Unlock()
	return n, err
}

// postRecvLocked is PostRecv under the receive lock.
func (qp *QP) postRecvLocked(wrs []RecvWR) (int, error) {
	if qp.closed.Load() {
		return 0, ErrClosed
	}
	if qp.rq == nil {
		return 0, invalid("uverbs: post recv: the QP receives from an SRQ")
	}
	if QPState(qp.state.Load()) == QPSReset {
		return 0, invalid("uverbs: post recv: the QP is in RESET")
	}
	return postRecv(qp.rq, &qp.rwr, qp.rsge, wrs, qp.cap.MaxRecvWR)
}

// postRecv puts wrs on rq through the scratch request and SGEs, and
// publishes what it put.
func postRecv(rq provider.RQ, w *provider.RecvWR, sge []provider.SGE, wrs []RecvWR, size int) (int, error) {
	n := 0
	var err error
	for i := range wrs {
		wr := &wrs[i]
		if len(wr.SGE) > len(sge) {
			err = invalid("uverbs: post recv: work request %d: %d SGEs, the queue takes %d", i, len(wr.SGE), len(sge))
			break
		}
		if perr := putRecv(rq, wr, w, sge); perr != nil {
			err = fmt.Errorf("uverbs: post recv: work request %d: %w", i, putErr(perr, "receive", size))
			break
		}
		n++
	}
	if n > 0 {
		if ferr := rq.Flush(); ferr != nil {
			err = errors.Join(err, fmt.Errorf("uverbs: post recv: %w", verbs.Public(ferr)))
		}
	}
	return n, err
}

// putRecv puts wr on rq: the caller's request itself for the drivers of
// this module (provider.RecvWR has RecvWR's layout), called directly so
// that it does not escape; a copy in w and sge for another driver.
func putRecv(rq provider.RQ, wr *RecvWR, w *provider.RecvWR, sge []provider.SGE) error {
	switch q := rq.(type) {
	case *rxe.RQ:
		return q.Put(recvView(wr))
	case *siw.RQ:
		return q.Put(recvView(wr))
	case *mlx5.RQ:
		return q.Put(recvView(wr))
	}
	ws := sge[:len(wr.SGE)]
	for j, s := range wr.SGE {
		ws[j] = provider.SGE(s)
	}
	w.ID = wr.ID
	w.SGE = ws
	return rq.Put(w)
}

package uverbs

import (
	"fmt"

	"github.com/purerdma/purerdma/internal/spin"
)

// SendQueue is a QP's send side owned by one goroutine: its Post takes no
// lock, where the QP's PostSend takes a spin lock (one locked instruction
// per call). It is rdma-core's thread domain (ibv_alloc_td) made
// memory-safe: the QP's Close, Modify and Drain may still run from any
// goroutine, and wait for a Post in progress to return (they pay a
// membarrier(2) system call for it while the queue is owned). Get one with
// QP.OwnSend; only one goroutine may use it, and Release gives the send
// side back. PostSend from other goroutines stays correct meanwhile, but
// each call pays that system call: post through the owner.
type SendQueue struct {
	qp *QP // nil after Release
}

// RecvQueue is a QP's receive side owned by one goroutine, as SendQueue is
// for the send side. Get one with QP.OwnRecv.
type RecvQueue struct {
	qp *QP
}

// OwnSend gives the QP's send side to the calling goroutine. It fails
// with ErrBusy while another SendQueue owns it, and with ErrClosed on a
// closed QP. Where the kernel lacks membarrier (before Linux 4.14) or
// outside Linux, the SendQueue takes the lock on each Post: correct,
// without the gain.
func (qp *QP) OwnSend() (*SendQueue, error) {
	if qp == nil {
		return nil, ErrClosed
	}
	if err := own(qp, &qp.sendMu, "send"); err != nil {
		return nil, err
	}
	return &SendQueue{qp: qp}, nil
}

// OwnRecv gives the QP's receive side to the calling goroutine, as
// OwnSend does the send side. A QP that receives from an SRQ has no
// receive side to own (ErrInvalid).
func (qp *QP) OwnRecv() (*RecvQueue, error) {
	if qp == nil {
		return nil, ErrClosed
	}
	if qp.recv.rq == nil {
		return nil, invalid("uverbs: own receive queue: the QP receives from an SRQ")
	}
	if err := own(qp, &qp.recvMu, "receive"); err != nil {
		return nil, err
	}
	return &RecvQueue{qp: qp}, nil
}

// own opens the gate of one of the QP's queue locks to an owner.
func own(qp *QP, l *spin.GateLock, side string) error {
	l.Lock()
	defer l.Unlock()
	switch {
	case qp.closed.Load():
		return ErrClosed
	case l.Owned():
		return fmt.Errorf("uverbs: own %s queue of QP %d: it has an owner already: %w", side, qp.num, ErrBusy)
	}
	l.Own()
	return nil
}

// Post posts send work requests as QP.PostSend does, without the lock.
// Call it from the owner only.
//
//go:nosplit
func (s *SendQueue) Post(wrs []SendWR) (int, error) {
	// No stack check (nosplit): docs/architecture.md, The data path.
	if s == nil || s.qp == nil {
		return 0, ErrClosed
	}
	qp := s.qp
	if !qp.sendMu.Enter() {
		// The QP is changing or gone: the locked way waits or says so.
		return qp.PostSend(wrs)
	}
	// PostSend's lines, written out: a shared function's call would
	// cost a tenth of a one-request post.
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
	qp.sendMu.Leave()
	return n, err
}

// Release gives the send side back to the QP: PostSend is as fast as
// before the SendQueue, and the SendQueue posts no more (ErrClosed).
func (s *SendQueue) Release() {
	if s == nil || s.qp == nil {
		return
	}
	disown(&s.qp.sendMu)
	s.qp = nil
}

// Post posts receive work requests as QP.PostRecv does, without the lock.
// Call it from the owner only.
//
//go:nosplit
func (r *RecvQueue) Post(wrs []RecvWR) (int, error) {
	// No stack check (nosplit): docs/architecture.md, The data path.
	if r == nil {
		return 0, ErrClosed
	}
	return r.qp.postRecvOwned(wrs) // a released one's nil QP says ErrClosed
}

// Release gives the receive side back to the QP.
func (r *RecvQueue) Release() {
	if r == nil || r.qp == nil {
		return
	}
	disown(&r.qp.recvMu)
	r.qp = nil
}

func disown(l *spin.GateLock) {
	l.Lock()
	l.Disown()
	l.Unlock()
}

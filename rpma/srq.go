package rpma

import (
	"errors"
	"sync/atomic"

	"github.com/purerdma/purerdma/uverbs"
)

// SRQ is a shared receive queue that several connections take their
// receives from (rpma_srq).
type SRQ struct {
	peer *Peer
	srq  *uverbs.SRQ
	rcq  *CQ // nil when configured without one
	// closed makes Recv on a deleted SRQ answer ErrClosed before it
	// looks at its arguments.
	closed atomic.Bool
}

// NewSRQ creates a shared receive queue (rpma_srq_new); a nil cfg means
// DefaultSRQConfig, and a zero field what SRQConfig says.
func (p *Peer) NewSRQ(cfg *SRQConfig) (*SRQ, error) {
	if err := p.usable("new SRQ"); err != nil {
		return nil, err
	}
	c, err := cfg.orDefault()
	if err != nil {
		return nil, err
	}
	cfg = &c
	srq, err := p.pd.CreateSRQ(uverbs.SRQInit{MaxWR: cfg.RQSize, MaxSGE: 1})
	if err != nil {
		return nil, provider("create SRQ", err)
	}
	s := &SRQ{peer: p, srq: srq}
	if cfg.RCQSize > 0 {
		if s.rcq, err = newCQ(p.ctx, cfg.RCQSize, nil); err != nil {
			srq.Close()
			return nil, err
		}
	}
	return s, nil
}

// RCQ returns the SRQ's receive CQ, or nil (rpma_srq_get_rcq).
func (s *SRQ) RCQ() *CQ {
	if s == nil {
		return nil
	}
	return s.rcq
}

// Recv posts a receive buffer to the SRQ (rpma_srq_recv); see Conn.Recv.
func (s *SRQ) Recv(dst *MR, off, n int, opCtx uint64) error {
	if s == nil {
		return errNil
	}
	if s.closed.Load() {
		return closedErr("SRQ recv", nil)
	}
	return postRecv(s.srq, dst, off, n, opCtx)
}

// Close deletes the SRQ (rpma_srq_delete); its connections must be gone.
// Closing it again does nothing, as rpma_srq_delete does with a NULL
// *srq_ptr.
func (s *SRQ) Close() error {
	if s == nil {
		return errNil
	}
	if s.closed.Load() {
		return nil
	}
	err := s.srq.Close()
	if err == nil {
		s.closed.Store(true)
	}
	return errors.Join(provider("delete SRQ", err), s.rcq.close())
}

// receiver is a QP or an SRQ.
type receiver interface {
	PostRecv([]uverbs.RecvWR) (int, error)
}

// postRecv posts a receive of n bytes at off of dst; a nil dst with 0 and
// 0 is a zero-length receive, as librpma allows.
func postRecv(q receiver, dst *MR, off, n int, opCtx uint64) error {
	sge, err := sgeOf(dst, off, n)
	if err != nil {
		return err
	}
	var s [1]uverbs.SGE
	var w [1]uverbs.RecvWR
	s[0], w[0] = sge, uverbs.RecvWR{ID: opCtx}
	if dst != nil {
		w[0].SGE = s[:]
	}
	// The concrete calls keep w and s on this stack: through the
	// interface they escaped, two allocations per receive posted.
	switch q := q.(type) {
	case *uverbs.QP:
		_, err = q.PostRecv(w[:])
	case *uverbs.SRQ:
		_, err = q.PostRecv(w[:])
	default:
		err = inval("receive on a %T", q)
	}
	return provider("recv", err)
}

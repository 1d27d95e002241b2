package rpma

import (
	"errors"

	"github.com/purerdma/purerdma/uverbs"
)

// SRQ is a shared receive queue that several connections take their
// receives from (rpma_srq).
type SRQ struct {
	peer *Peer
	srq  *uverbs.SRQ
	rcq  *CQ // nil when configured without one
}

// NewSRQ creates a shared receive queue (rpma_srq_new); a nil cfg means
// the defaults.
func (p *Peer) NewSRQ(cfg *SRQConfig) (*SRQ, error) {
	if cfg == nil {
		cfg = NewSRQConfig()
	}
	if cfg.RQSize < 1 || cfg.RCQSize < 0 {
		return nil, inval("SRQ config %+v", *cfg)
	}
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
func (s *SRQ) RCQ() *CQ { return s.rcq }

// Recv posts a receive buffer to the SRQ (rpma_srq_recv); see Conn.Recv.
func (s *SRQ) Recv(dst *MR, off, n int, opCtx uint64) error {
	wr, err := recvWR(dst, off, n, opCtx)
	if err != nil {
		return err
	}
	_, err = s.srq.PostRecv([]uverbs.RecvWR{wr})
	return provider("SRQ recv", err)
}

// Close deletes the SRQ (rpma_srq_delete); its connections must be gone.
func (s *SRQ) Close() error {
	return errors.Join(provider("delete SRQ", s.srq.Close()), s.rcq.close())
}

// recvWR builds a receive of n bytes at off of dst; a nil dst with 0 and
// 0 is a zero-length receive, as librpma allows.
func recvWR(dst *MR, off, n int, opCtx uint64) (uverbs.RecvWR, error) {
	wr := uverbs.RecvWR{ID: opCtx}
	if dst == nil {
		if off != 0 || n != 0 {
			return wr, inval("receive of %d bytes at %d without a region", n, off)
		}
		return wr, nil
	}
	s, err := dst.sge(off, n)
	if err != nil {
		return wr, err
	}
	wr.SGE = []uverbs.SGE{s}
	return wr, nil
}

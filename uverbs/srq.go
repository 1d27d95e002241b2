package uverbs

import (
	"fmt"
	"sync/atomic"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/spin"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
)

// SRQInit describes a shared receive queue (struct ibv_srq_init_attr).
type SRQInit struct {
	MaxWR  int
	MaxSGE int
	// Limit, if not 0, arms the SRQ: when fewer than Limit requests are
	// left, the context gets an EventSRQLimitReached event.
	Limit int
}

// SRQ is a shared receive queue: several QPs take their receive work
// requests from it.
type SRQ struct {
	pd     *PD
	core   *verbs.Context
	handle uint32
	num    uint32
	maxWR  int
	maxSGE int
	id     uint64

	closed atomic.Bool
	// mu is the receive lock, a GateLock for its one-CAS TryLockFree:
	// an SRQ has no owner, so its gate stays closed.
	mu   spin.GateLock
	recv recvSide

	destroy verbs.Life
}

// CreateSRQ creates a shared receive queue in pd (ibv_create_srq).
func (pd *PD) CreateSRQ(init SRQInit) (*SRQ, error) {
	c, err := pd.queueCore("uverbs: create SRQ")
	if err != nil {
		return nil, err
	}
	if init.MaxWR < 1 || init.MaxSGE < 0 || init.Limit < 0 {
		return nil, invalid("uverbs: create SRQ: %+v", init)
	}
	s := &SRQ{pd: pd, core: c}
	s.id = c.Add(s, func() { s.destroy.Release(s.release) })
	sinit := provider.SRQInit{MaxWR: uint32(init.MaxWR), MaxSGE: uint32(init.MaxSGE), Limit: uint32(init.Limit)}
	in, out := c.Udata(abi.IB_USER_VERBS_CMD_CREATE_SRQ)
	drvIn := make([]byte, in)
	pending, err := c.Provider.CreateSRQ(&sinit, drvIn)
	if err != nil {
		c.Remove(s.id)
		return nil, fmt.Errorf("uverbs: create SRQ: %w", verbs.Public(err))
	}
	req := abi.CreateSRQ{UserHandle: s.id, PDHandle: pd.Handle(), MaxWr: sinit.MaxWR, MaxSGE: sinit.MaxSGE, SRQLimit: sinit.Limit}
	var resp abi.CreateSRQResp
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_CREATE_SRQ, Req: ucmd.Bytes(&req), Resp: ucmd.Bytes(&resp), DrvIn: drvIn, DrvOut: make([]byte, out)}
	if err := pd.core.Do(&cmd); err != nil {
		pending.Abort()
		c.Remove(s.id)
		return nil, fmt.Errorf("uverbs: create SRQ: %w", verbs.Public(err))
	}
	s.handle, s.num = resp.SRQHandle, resp.SRQN
	sinit.Handle, sinit.MaxWR, sinit.MaxSGE = resp.SRQHandle, resp.MaxWr, resp.MaxSGE
	rq, err := verbs.Finish(c, pending, cmd.DrvOut, s.destroyCmd())
	if err != nil {
		c.Remove(s.id)
		return nil, fmt.Errorf("uverbs: create SRQ: %w", err)
	}
	s.maxWR, s.maxSGE = int(sinit.MaxWR), int(sinit.MaxSGE) // as the driver left them
	s.recv = recvSide{sge: make([]provider.SGE, s.maxSGE), size: s.maxWR}
	s.recv.setRQ(rq)
	return s, nil
}

// Num returns the SRQ number.
func (s *SRQ) Num() uint32 {
	if s == nil {
		return 0
	}
	return s.num
}

// Handle returns the kernel's handle of the SRQ.
func (s *SRQ) Handle() uint32 {
	if s == nil {
		return 0
	}
	return s.handle
}

// MaxWR returns how many requests the SRQ holds; MaxSGE how many SGEs
// each may have.
func (s *SRQ) MaxWR() int {
	if s == nil {
		return 0
	}
	return s.maxWR
}

// MaxSGE returns how many SGEs a request may have.
func (s *SRQ) MaxSGE() int {
	if s == nil {
		return 0
	}
	return s.maxSGE
}

// PostRecv posts receive work requests (ibv_post_srq_recv), with
// PostSend's partial-success rule. It does not allocate.
//
//go:nosplit
func (s *SRQ) PostRecv(wrs []RecvWR) (int, error) {
	// No stack check (nosplit): docs/architecture.md, The data path.
	if s == nil {
		return 0, ErrClosed
	}
	// The lock free: one CAS; held: out of line, so that nothing but
	// recv.post is called here (QP.PostSend says why). No defer:
	// nothing under the lock panics.
	if !s.mu.TryLockFree() {
		return s.postRecvSlow(wrs)
	}
	if s.closed.Load() {
		s.mu.UnlockFree()
		return 0, ErrClosed
	}
	n, err := s.recv.post(wrs)
	s.mu.UnlockFree()
	return n, err
}

// postRecvSlow is PostRecv when the lock is held: it waits, then posts
// as PostRecv does.
//
//go:noinline
func (s *SRQ) postRecvSlow(wrs []RecvWR) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return 0, ErrClosed
	}
	return s.recv.post(wrs)
}

// SetLimit arms the SRQ's limit event (ibv_modify_srq with IBV_SRQ_LIMIT).
// Resizing an SRQ is not supported.
func (s *SRQ) SetLimit(limit int) error {
	if s == nil {
		return ErrClosed
	}
	if limit < 0 || limit > s.maxWR {
		return invalid("uverbs: SRQ limit %d of %d", limit, s.maxWR)
	}
	req := abi.ModifySRQ{SRQHandle: s.handle, AttrMask: abi.IB_SRQ_LIMIT, SRQLimit: uint32(limit)}
	// rxe wants its resize pointer even when nothing is resized: 0.
	in, _ := s.core.Udata(abi.IB_USER_VERBS_CMD_MODIFY_SRQ)
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_MODIFY_SRQ, Req: ucmd.Bytes(&req), DrvIn: make([]byte, in)}
	if err := s.do(&cmd); err != nil {
		return fmt.Errorf("uverbs: modify SRQ: %w", verbs.Public(err))
	}
	return nil
}

// Limit returns the SRQ's current limit (ibv_query_srq); 0 when disarmed.
func (s *SRQ) Limit() (int, error) {
	if s == nil {
		return 0, ErrClosed
	}
	req := abi.QuerySRQ{SRQHandle: s.handle}
	var resp abi.QuerySRQResp
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_QUERY_SRQ, Req: ucmd.Bytes(&req), Resp: ucmd.Bytes(&resp)}
	if err := s.do(&cmd); err != nil {
		return 0, fmt.Errorf("uverbs: query SRQ: %w", verbs.Public(err))
	}
	return int(resp.SRQLimit), nil
}

func (s *SRQ) do(cmd *ucmd.Cmd) error { return s.destroy.Do(s.core, cmd) }

func (s *SRQ) destroyCmd() *ucmd.Cmd {
	req := abi.DestroySRQ{SRQHandle: s.handle}
	var resp abi.DestroySRQResp
	return &ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_DESTROY_SRQ, Req: ucmd.Bytes(&req), Resp: ucmd.Bytes(&resp)}
}

// Close destroys the SRQ. It fails with ErrBusy while QPs use it. It is
// safe to call more than once.
func (s *SRQ) Close() error {
	if s == nil {
		return ErrClosed
	}
	return s.destroy.Destroy(s.core, "uverbs: destroy SRQ", s.destroyCmd(), s.release)
}

func (s *SRQ) release() {
	s.closed.Store(true)
	s.core.Remove(s.id)
	s.mu.Lock()
	s.recv.rq.Close()
	s.mu.Unlock()
}

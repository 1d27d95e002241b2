package uverbs

import (
	"fmt"
	"sync/atomic"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mlx5"
	"github.com/purerdma/purerdma/internal/provider/rxe"
	"github.com/purerdma/purerdma/internal/provider/siw"
	"github.com/purerdma/purerdma/internal/spin"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
)

// CQ is what a QP needs of a completion queue: *cq.CQ satisfies it.
type CQ interface {
	// Handle returns the kernel's handle of the CQ.
	Handle() uint32
	// Context returns the context the CQ was created on.
	Context() *Context
}

// QPType is a queue pair's transport service (enum ibv_qp_type).
type QPType uint8

// QP types.
const (
	RC QPType = 2 // IB_UVERBS_QPT_RC: reliable connected
	UC QPType = 3 // IB_UVERBS_QPT_UC: unreliable connected
	UD QPType = 4 // IB_UVERBS_QPT_UD: unreliable datagram
)

//go:generate go run ../hack/namegen -type QPType -trimprefix IB_UVERBS_QPT_ -doc "String returns \"RC\", \"UC\" or \"UD\"."

// QPCap are a QP's queue sizes (struct ibv_qp_cap). CreateQP returns what
// the device granted, which may exceed the request.
type QPCap struct {
	MaxSendWR     int
	MaxRecvWR     int
	MaxSendSGE    int
	MaxRecvSGE    int
	MaxInlineData int
}

// QPInit describes a new QP (struct ibv_qp_init_attr).
type QPInit struct {
	Type   QPType
	SendCQ CQ
	RecvCQ CQ
	SRQ    *SRQ // receive work comes from the SRQ; Cap's receive sizes are ignored
	Cap    QPCap
	// SigAll makes every send request signaled, whatever its flags.
	SigAll bool
}

// QP is a queue pair. PostSend and PostRecv may run concurrently with each
// other and from several goroutines.
type QP struct {
	pd     *PD
	core   *verbs.Context
	handle uint32
	num    uint32
	typ    QPType
	cap    QPCap
	id     uint64
	sigAll bool
	caps   DeviceCap // the context's DeviceCapFlags

	closed atomic.Bool
	state  atomic.Uint32 // the last state Modify set
	// noReads is set while the QP may have no RDMA read or atomic
	// outstanding as initiator (max_rd_atomic 0, from the last Modify
	// that set it, or on iWARP from rdmacm): PostSend refuses those
	// operations then instead of posting what would never complete. Only
	// they read it.
	noReads atomic.Bool
	// plainOps are the opcodes PostSend hands to the driver after
	// plain's checks alone (plainOpsFor): set with noReads.
	plainOps atomic.Uint32

	sendMu spin.GateLock // one locked instruction per post (package spin); none for an owner (SendQueue)
	sq     provider.SQ   // set by setSQ, with the three below
	// sq by its concrete type when it is one of this module's drivers',
	// else nil: the data path calls the driver through these, a load
	// and a test each, where a type assertion on sq took twice that and
	// moved registers about (docs/benchmarks-host.md, fourth pass).
	mlx5SQ *mlx5.SQ
	rxeSQ  *rxe.SQ
	siwSQ  *siw.SQ
	swr    provider.SendWR // scratch: what copySend gives the provider in place of the caller's request
	sah    provider.AH     // scratch: a UD request's address handle, copied
	ssge   []provider.SGE

	recvMu spin.GateLock // the same for receives (RecvQueue)
	recv   recvSide      // its rq is nil with an SRQ

	destroy verbs.Life
}

// CreateQP creates a queue pair in pd (ibv_create_qp).
func (pd *PD) CreateQP(init QPInit) (*QP, error) {
	c, err := pd.queueCore("uverbs: create QP")
	if err != nil {
		return nil, err
	}
	if err := checkQPInit(pd.ctx, &init); err != nil {
		return nil, fmt.Errorf("uverbs: create QP: %w", err)
	}
	qp := &QP{pd: pd, core: c, typ: init.Type, sigAll: init.SigAll, caps: pd.ctx.caps}
	qp.id = c.Add(qp, func() {
		qp.quiesce()
		defer qp.resume()
		qp.destroy.Release(qp.unmap)
	})
	// The driver sees the request first and may change the capacities
	// the command asks for; after the command it sees what the kernel
	// granted, and may lower that to what its queues hold.
	pinit := provider.QPInit{
		Type:       uint8(init.Type),
		MaxSendWR:  uint32(init.Cap.MaxSendWR),
		MaxRecvWR:  uint32(init.Cap.MaxRecvWR),
		MaxSendSGE: uint32(init.Cap.MaxSendSGE),
		MaxRecvSGE: uint32(init.Cap.MaxRecvSGE),
		MaxInline:  uint32(init.Cap.MaxInlineData),
		SigAll:     init.SigAll,
		SendCQ:     verbs.CQOf(init.SendCQ),
		RecvCQ:     verbs.CQOf(init.RecvCQ),
		SendCQLock: verbs.CQLockOf(init.SendCQ),
		RecvCQLock: verbs.CQLockOf(init.RecvCQ),
	}
	if init.SRQ != nil {
		pinit.SRQ, pinit.SRQQueue = true, init.SRQ.recv.rq
		pinit.MaxRecvWR, pinit.MaxRecvSGE = 0, 0
	}
	in, out := c.Udata(abi.IB_USER_VERBS_CMD_CREATE_QP)
	drvIn := make([]byte, in)
	pending, err := c.Provider.CreateQP(&pinit, drvIn)
	if err != nil {
		c.Remove(qp.id)
		return nil, fmt.Errorf("uverbs: create %s QP: %w", init.Type, verbs.Public(err))
	}
	req := abi.CreateQP{
		UserHandle:    qp.id,
		PDHandle:      pd.Handle(),
		SendCQHandle:  init.SendCQ.Handle(),
		RecvCQHandle:  init.RecvCQ.Handle(),
		MaxSendWr:     pinit.MaxSendWR,
		MaxRecvWr:     pinit.MaxRecvWR,
		MaxSendSGE:    pinit.MaxSendSGE,
		MaxRecvSGE:    pinit.MaxRecvSGE,
		MaxInlineData: pinit.MaxInline,
		QPType:        uint8(init.Type),
	}
	if init.SigAll {
		req.SQSigAll = 1
	}
	if init.SRQ != nil {
		req.SRQHandle, req.IsSRQ = init.SRQ.handle, 1
	}
	var resp abi.CreateQPResp
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_CREATE_QP, Req: ucmd.Bytes(&req), Resp: ucmd.Bytes(&resp), DrvIn: drvIn, DrvOut: make([]byte, out)}
	if err := pd.core.Do(&cmd); err != nil {
		pending.Abort()
		c.Remove(qp.id)
		return nil, fmt.Errorf("uverbs: create %s QP: %w", init.Type, err)
	}
	qp.handle, qp.num = resp.QPHandle, resp.QPN
	pinit.Handle, pinit.QPNum = resp.QPHandle, resp.QPN
	pinit.MaxSendWR, pinit.MaxRecvWR = resp.MaxSendWr, resp.MaxRecvWr
	pinit.MaxSendSGE, pinit.MaxRecvSGE = resp.MaxSendSGE, resp.MaxRecvSGE
	pinit.MaxInline = resp.MaxInlineData
	queues, err := verbs.Finish(c, pending, cmd.DrvOut, qp.destroyCmd())
	if err != nil {
		c.Remove(qp.id)
		return nil, fmt.Errorf("uverbs: create QP: %w", err)
	}
	qp.cap = QPCap{
		MaxSendWR:     int(pinit.MaxSendWR),
		MaxRecvWR:     int(pinit.MaxRecvWR),
		MaxSendSGE:    int(pinit.MaxSendSGE),
		MaxRecvSGE:    int(pinit.MaxRecvSGE),
		MaxInlineData: int(pinit.MaxInline),
	}
	qp.setSQ(queues.SQ)
	qp.recv.setRQ(queues.RQ)
	qp.parkRecv(true) // a new QP is in RESET
	qp.setNoReads(false)
	qp.ssge = make([]provider.SGE, qp.cap.MaxSendSGE)
	qp.recv.sge, qp.recv.size = make([]provider.SGE, qp.cap.MaxRecvSGE), qp.cap.MaxRecvWR
	return qp, nil
}

func checkQPInit(c *Context, init *QPInit) error {
	switch {
	case init.Type != RC && init.Type != UC && init.Type != UD:
		return invalid("QP type %d", init.Type)
	case init.SendCQ == nil || init.RecvCQ == nil:
		return invalid("a QP needs a send CQ and a receive CQ")
	case init.SendCQ.Context() != c || init.RecvCQ.Context() != c:
		return invalid("the CQs belong to another device context")
	case init.SRQ != nil && init.SRQ.pd.ctx != c:
		return invalid("the SRQ belongs to another device context")
	case verbs.CQOf(init.SendCQ) == nil || verbs.CQOf(init.RecvCQ) == nil:
		// After the context check, which refuses a nil *cq.CQ.
		return invalid("a QP takes CQs made by package cq")
	}
	cp := init.Cap
	if cp.MaxSendWR < 0 || cp.MaxRecvWR < 0 || cp.MaxSendSGE < 0 || cp.MaxRecvSGE < 0 || cp.MaxInlineData < 0 {
		return invalid("negative QP capacity %+v", cp)
	}
	return nil
}

// invalid returns an error matching ErrInvalid and unix.EINVAL.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrInvalid)
}

// Num returns the QP number, which peers address the QP by.
func (qp *QP) Num() uint32 {
	if qp == nil {
		return 0
	}
	return qp.num
}

// Handle returns the kernel's handle of the QP.
func (qp *QP) Handle() uint32 {
	if qp == nil {
		return 0
	}
	return qp.handle
}

// Type returns the QP's transport.
func (qp *QP) Type() QPType {
	if qp == nil {
		return 0
	}
	return qp.typ
}

// Cap returns the queue sizes the device granted.
func (qp *QP) Cap() QPCap {
	if qp == nil {
		return QPCap{}
	}
	return qp.cap
}

// PD returns the QP's protection domain.
func (qp *QP) PD() *PD {
	if qp == nil {
		return nil
	}
	return qp.pd
}

func (qp *QP) destroyCmd() *ucmd.Cmd {
	req := abi.DestroyQP{QPHandle: qp.handle}
	var resp abi.DestroyQPResp
	return &ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_DESTROY_QP, Req: ucmd.Bytes(&req), Resp: ucmd.Bytes(&resp)}
}

// Close destroys the QP. Its CQs, SRQ and PD may be destroyed after it.
// It is safe to call more than once.
func (qp *QP) Close() error {
	if qp == nil {
		return ErrClosed
	}
	// A doorbell in progress holds the kernel's QP object, and
	// DESTROY_QP would fail with EBUSY: keep the data path out meanwhile.
	qp.quiesce()
	defer qp.resume()
	return qp.destroy.Destroy(qp.core, "uverbs: destroy QP", qp.destroyCmd(), qp.unmap)
}

// quiesce waits for the data path to leave the queues and keeps it out
// until resume. The locks come before the object's life lock, always.
func (qp *QP) quiesce() {
	qp.sendMu.Lock()
	qp.recvMu.Lock()
}

func (qp *QP) resume() {
	qp.recvMu.Unlock()
	qp.sendMu.Unlock()
}

// unmap unmaps the queues of the destroyed QP. Run it quiesced.
func (qp *QP) unmap() {
	qp.core.Remove(qp.id)
	qp.closeQueues()
}

// closeQueues marks the QP closed, takes its queues from their owners and
// closes the drivers' queues. Run it quiesced.
func (qp *QP) closeQueues() {
	qp.closed.Store(true)
	// The send data path finds a closed QP by its missing driver
	// (postOther): no driver is called after its Close.
	qp.mlx5SQ, qp.rxeSQ, qp.siwSQ = nil, nil, nil
	qp.parkRecv(true)
	qp.sendMu.Disown()
	qp.recvMu.Disown()
	qp.sq.Close()
	if qp.recv.rq != nil {
		qp.recv.rq.Close()
	}
}

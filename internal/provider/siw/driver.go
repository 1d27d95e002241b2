package siw

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// Driver returns siw's provider; internal/provider/drivers lists it.
func Driver() provider.Driver { return driver{} }

// Sizes of the siw ABI structs (siw-abi.h), checked against encoding/binary
// in the tests.
const (
	sqeSize    = 120 // struct siw_sqe
	rqeSize    = 112 // struct siw_rqe
	cqeSize    = 32  // struct siw_cqe
	cqCtrlSize = 8   // struct siw_cq_ctrl

	allocCtxRespSize = 8  // struct siw_uresp_alloc_ctx
	regMRReqSize     = 8  // struct siw_ureq_reg_mr
	regMRRespSize    = 8  // struct siw_uresp_reg_mr
	createCQRespSize = 16 // struct siw_uresp_create_cq
	createQPRespSize = 32 // struct siw_uresp_create_qp
	createSRQResp    = 16 // struct siw_uresp_create_srq

	// flagsWord is the offset of the 32-bit word holding flags (and, in
	// SQEs and RQEs, num_sge and opcode; in CQEs, opcode and status) in
	// every queue element.
	flagsWord = 8
)

// wordAt returns the flags word of the element at byte offset off of buf.
//
// It names sync/atomic, which the package must import: the compiler (Go
// 1.26) inlines the atomic word's Load and Store into a package that
// imports sync/atomic and calls them out of line in one that does not,
// and the call made every register live across it spill (a third of a
// poll's instructions per completion).
func wordAt(buf []byte, off int) *atomic.Uint32 { return mem.Uint32(buf, off+flagsWord) }

type driver struct{}

func (driver) Name() string { return "siw" }

// NewContext returns siw's state for a device context: only the device,
// which the queues are mapped from. GET_CONTEXT's response (the device
// id) names nothing to map.
func (driver) NewContext(dev provider.Device) (provider.Context, error) {
	return &devContext{dev: dev}, nil
}

// devContext is siw's provider.Context.
type devContext struct {
	provider.KernelRings
	dev provider.Device
}

// Udata follows rdma-core's providers/siw/siw_abi.h: only REG_MR sends
// driver data in; GET_CONTEXT, REG_MR and the queue creations read a
// response, which the kernel refuses to write into a smaller buffer.
func (*devContext) Udata(cmd uint32) (in, out int) {
	switch cmd {
	case abi.IB_USER_VERBS_CMD_GET_CONTEXT:
		return 0, allocCtxRespSize
	case abi.IB_USER_VERBS_CMD_REG_MR:
		return regMRReqSize, regMRRespSize
	case abi.IB_USER_VERBS_CMD_CREATE_CQ:
		return 0, createCQRespSize
	case abi.IB_USER_VERBS_CMD_CREATE_QP:
		return 0, createQPRespSize
	case abi.IB_USER_VERBS_CMD_CREATE_SRQ:
		return 0, createSRQResp
	}
	return 0, 0
}

// CreateCQ leaves the size as the caller asked.
func (c *devContext) CreateCQ(*provider.CQInit, []byte) (provider.Pending[provider.CQ], error) {
	return provider.AfterCommand[provider.CQ](func(resp []byte) (provider.CQ, error) { return mapCQ(c.dev, resp) }), nil
}

// CreateQP leaves the capacities as the caller asked; Finish maps the
// queues the kernel allocated.
func (c *devContext) CreateQP(init *provider.QPInit, _ []byte) (provider.Pending[provider.Queues], error) {
	return provider.AfterCommand[provider.Queues](func(resp []byte) (provider.Queues, error) {
		sq, rq, err := mapQP(c.dev, init, resp)
		return provider.Queues{SQ: sq, RQ: rq}, err
	}), nil
}

// CreateSRQ leaves the sizes as the caller asked.
func (c *devContext) CreateSRQ(*provider.SRQInit, []byte) (provider.Pending[provider.RQ], error) {
	return provider.AfterCommand[provider.RQ](func(resp []byte) (provider.RQ, error) { return mapSRQ(c.dev, resp) }), nil
}

// NewAH is never reached: siw has only RC QPs, and iWARP has no address
// handles (the kernel refuses CREATE_AH first).
func (*devContext) NewAH(*provider.AHAttr, []byte) (provider.AH, error) {
	return provider.AH{}, fmt.Errorf("siw: address handles: %w", provider.ErrUnsupported)
}

// mapCQ maps the CQ the kernel described in resp.
func mapCQ(dev provider.Device, resp []byte) (provider.CQ, error) {
	if len(resp) < createCQRespSize {
		return nil, fmt.Errorf("siw: CREATE_CQ response has %d bytes, want %d", len(resp), createCQRespSize)
	}
	// The keys are not compared with SIW_INVAL_UOBJ_KEY, as libsiw
	// compares them: since Linux 5.4 they are byte offsets that grow by
	// the pages of each queue of the context, and the 145th page's,
	// 0x90000, equals that "invalid" key; a kernel that has no mapping to
	// offer fails the command instead (siw_create_cq, siw_create_qp,
	// siw_create_srq). docs/kernel-notes.md has the details.
	r := *mem.At[abi.SiwUrespCreateCQ](resp, 0)
	if r.NumCQE == 0 {
		return nil, errors.New("siw: CQ with no elements")
	}
	// The kernel allocates and offers exactly this (siw_create_cq); the
	// mmap system call rounds it up to whole pages as the kernel does.
	buf, err := mapQueue(dev, r.CQKey, r.NumCQE, cqeSize, cqCtrlSize)
	if err != nil {
		return nil, fmt.Errorf("siw: CQ: %w", err)
	}
	cq := &completionQueue{dev: dev, buf: buf, num: r.NumCQE, ctrl: int(r.NumCQE) * cqeSize}
	cq.mapped()
	mem.Uint32(buf, cq.ctrl).Store(abi.SIW_NOTIFY_NOT)
	return cq, nil
}

// mapQP maps the send queue and, unless the QP has an SRQ, the receive
// queue the kernel described in resp; init holds what it granted.
func mapQP(dev provider.Device, init *provider.QPInit, resp []byte) (provider.SQ, provider.RQ, error) {
	if len(resp) < createQPRespSize {
		return nil, nil, fmt.Errorf("siw: CREATE_QP response has %d bytes, want %d", len(resp), createQPRespSize)
	}
	r := *mem.At[abi.SiwUrespCreateQP](resp, 0)
	if r.NumSQE == 0 { // keys: see mapCQ
		return nil, nil, errors.New("siw: the kernel offers no send queue")
	}
	sqBuf, err := mapQueue(dev, r.SQKey, r.NumSQE, sqeSize, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("siw: SQ: %w", err)
	}
	sq := &sendQueue{
		dev:    dev,
		buf:    sqBuf,
		num:    r.NumSQE,
		handle: init.Handle,
		maxSGE: min(int(init.MaxSendSGE), abi.SIW_MAX_SGE),
	}
	if init.SRQ {
		return sq, nil, nil
	}
	rq := &recvQueue{dev: dev, num: r.NumRQE, maxSGE: min(int(init.MaxRecvSGE), abi.SIW_MAX_SGE)}
	// A QP created with max_recv_wr 0 has no receive queue, and the kernel
	// then leaves rq_key 0 rather than SIW_INVAL_UOBJ_KEY: there is
	// nothing to map, and every Put finds the queue full.
	if r.NumRQE == 0 {
		return sq, rq, nil
	}
	rq.buf, err = mapQueue(dev, r.RQKey, r.NumRQE, rqeSize, 0)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("siw: RQ: %w", err), sq.Close())
	}
	return sq, rq, nil
}

// mapSRQ maps the SRQ the kernel described in resp.
func mapSRQ(dev provider.Device, resp []byte) (provider.RQ, error) {
	if len(resp) < createSRQResp {
		return nil, fmt.Errorf("siw: CREATE_SRQ response has %d bytes, want %d", len(resp), createSRQResp)
	}
	r := *mem.At[abi.SiwUrespCreateSRQ](resp, 0)
	if r.NumRQE == 0 { // keys: see mapCQ
		return nil, errors.New("siw: the kernel offers an SRQ with no elements")
	}
	buf, err := mapQueue(dev, r.SRQKey, r.NumRQE, rqeSize, 0)
	if err != nil {
		return nil, fmt.Errorf("siw: SRQ: %w", err)
	}
	// The SRQ's max_sge is not in the response; the caller has checked
	// each request against it, and the ring holds SIW_MAX_SGE.
	return &recvQueue{dev: dev, buf: buf, num: r.NumRQE, maxSGE: abi.SIW_MAX_SGE}, nil
}

// mapQueue maps n elements of size bytes plus extra bytes at key, the
// length the kernel registered for the mapping.
func mapQueue(dev provider.Device, key uint64, n uint32, size, extra int) ([]byte, error) {
	length := uint64(n)*uint64(size) + uint64(extra)
	if length > 1<<40 {
		return nil, fmt.Errorf("%d elements is beyond reason", n)
	}
	buf, err := dev.Mmap(key, int(length))
	if err != nil {
		return nil, err
	}
	if len(buf) < int(length) {
		return nil, errors.Join(fmt.Errorf("mapping has %d bytes, want %d", len(buf), length), dev.Munmap(buf))
	}
	return buf, nil
}

// unmap unmaps *buf once.
func unmap(dev provider.Device, buf *[]byte) error {
	if *buf == nil {
		return nil
	}
	b := *buf
	*buf = nil
	return dev.Munmap(b)
}

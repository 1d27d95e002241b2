package rxe

import (
	"encoding/binary"
	"fmt"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

// Driver returns rxe's provider; internal/provider/drivers lists it.
func Driver() provider.Driver { return driver{} }

// Sizes of the driver responses (include/uapi/rdma/rdma_user_rxe.h),
// checked against the abi structs in the tests.
const (
	mmInfoSize        = 16 // struct mminfo
	createCQRespSize  = 16 // struct rxe_create_cq_resp
	resizeCQRespSize  = 16 // struct rxe_resize_cq_resp
	createQPRespSize  = 32 // struct rxe_create_qp_resp
	createSRQRespSize = 24 // struct rxe_create_srq_resp
	createAHRespSize  = 8  // struct rxe_create_ah_resp
	modifySRQCmdSize  = 8  // struct rxe_modify_srq_cmd
)

type driver struct{}

func (driver) Name() string { return "rxe" }

// NewContext returns rxe's state for a device context. GET_CONTEXT
// carries no rxe data either way, so the state is only the device, which
// the queues are mapped from.
func (driver) NewContext(dev provider.Device) (provider.Context, error) {
	return &devContext{dev: dev}, nil
}

// devContext is rxe's provider.Context.
type devContext struct {
	provider.KernelRings
	dev provider.Device
}

// Udata returns the rxe driver data sizes. The extended commands
// IB_USER_VERBS_EX_CMD_CREATE_CQ and _CREATE_QP have the same numbers as
// the legacy ones and the same driver data, so cmd may be either.
//
// rxe takes driver request data only for MODIFY_SRQ: rxe_modify_srq
// refuses an inlen below sizeof(struct rxe_modify_srq_cmd), whose
// mmap_info_addr is where a resize (IB_SRQ_MAX_WR) writes the new
// mapping. A zero address is fine for IB_SRQ_LIMIT alone. rxe_create_qp
// refuses any request data at all.
func (*devContext) Udata(cmd uint32) (in, out int) {
	switch cmd {
	case abi.IB_USER_VERBS_CMD_CREATE_CQ: // = IB_USER_VERBS_EX_CMD_CREATE_CQ
		return 0, createCQRespSize
	case abi.IB_USER_VERBS_CMD_RESIZE_CQ:
		return 0, resizeCQRespSize
	case abi.IB_USER_VERBS_CMD_CREATE_QP: // = IB_USER_VERBS_EX_CMD_CREATE_QP
		return 0, createQPRespSize
	case abi.IB_USER_VERBS_CMD_CREATE_SRQ:
		return 0, createSRQRespSize
	case abi.IB_USER_VERBS_CMD_MODIFY_SRQ:
		return modifySRQCmdSize, 0
	case abi.IB_USER_VERBS_CMD_CREATE_AH:
		return 0, createAHRespSize
	}
	return 0, 0
}

// mmInfo decodes a struct mminfo at off in a driver response.
func mmInfo(resp []byte, off int) abi.MMInfo {
	b := resp[off : off+mmInfoSize]
	return abi.MMInfo{
		Offset: binary.NativeEndian.Uint64(b[0:]),
		Size:   binary.NativeEndian.Uint32(b[8:]),
	}
}

func shortResp(what string, got, want int) error {
	return fmt.Errorf("rxe: %s response is %d bytes, want %d: %w", what, got, want, provider.ErrInvalid)
}

// CreateCQ leaves the size as the caller asked: the kernel rounds it.
func (c *devContext) CreateCQ(*provider.CQInit, []byte) (provider.Pending[provider.CQ], error) {
	return provider.AfterCommand[provider.CQ](func(resp []byte) (provider.CQ, error) { return mapCQ(c.dev, resp) }), nil
}

// CreateQP leaves the capacities as the caller asked; Finish maps the
// queues with what the kernel granted.
func (c *devContext) CreateQP(init *provider.QPInit, _ []byte) (provider.Pending[provider.Queues], error) {
	return provider.AfterCommand[provider.Queues](func(resp []byte) (provider.Queues, error) {
		sq, rq, err := mapQP(c.dev, init, resp)
		return provider.Queues{SQ: sq, RQ: rq}, err
	}), nil
}

// CreateSRQ leaves the sizes as the caller asked.
func (c *devContext) CreateSRQ(init *provider.SRQInit, _ []byte) (provider.Pending[provider.RQ], error) {
	return provider.AfterCommand[provider.RQ](func(resp []byte) (provider.RQ, error) { return mapSRQ(c.dev, init, resp) }), nil
}

// NewAH returns rxe_create_ah_resp.ah_num as the AH's number, or 0 (which
// kernels before 5.16 return, expecting an address vector in the WQE
// instead, and which the send queue refuses) when the response is short.
func (*devContext) NewAH(_ *provider.AHAttr, resp []byte) (provider.AH, error) {
	if len(resp) < createAHRespSize {
		return provider.AH{}, nil
	}
	return provider.AH{Num: binary.NativeEndian.Uint32(resp[0:])}, nil
}

// mapCQ maps the CQ the kernel described in resp.
func mapCQ(dev provider.Device, resp []byte) (provider.CQ, error) {
	if len(resp) < createCQRespSize {
		return nil, shortResp("CREATE_CQ", len(resp), createCQRespSize)
	}
	c := &cq{}
	if err := c.q.open(dev, mmInfo(resp, 0), wcSize, "CQ"); err != nil {
		return nil, err
	}
	c.restart()
	return c, nil
}

// mapQP maps the receive queue (unless the QP has an SRQ) and the send
// queue with the capacities the kernel granted, which init holds by now.
// rxe_create_qp_resp lists the receive queue first. The RQ is a nil
// interface, not a typed nil, with an SRQ.
func mapQP(dev provider.Device, init *provider.QPInit, resp []byte) (provider.SQ, provider.RQ, error) {
	if len(resp) < createQPRespSize {
		return nil, nil, shortResp("CREATE_QP", len(resp), createQPRespSize)
	}
	var r *rq
	if !init.SRQ {
		r = &rq{maxSGE: init.MaxRecvSGE}
		need := recvWQEHdr + int(init.MaxRecvSGE)*sgeSize
		if err := r.q.open(dev, mmInfo(resp, 0), need, "receive queue"); err != nil {
			return nil, nil, err
		}
		r.q.setLimit(init.MaxRecvWR)
		r.init()
	}
	s := &sq{init: *init}
	need := sendWQEHdr + max(int(init.MaxSendSGE)*sgeSize, int(init.MaxInline))
	if err := s.q.open(dev, mmInfo(resp, mmInfoSize), need, "send queue"); err != nil {
		if r != nil {
			r.Close()
		}
		return nil, nil, err
	}
	s.q.setLimit(init.MaxSendWR)
	s.setPlain()
	s.pending = s.q.prod.Load()
	s.published = s.pending
	if r == nil {
		return s, nil, nil // not a typed nil in the interface
	}
	return s, r, nil
}

// mapSRQ maps the SRQ the kernel described in resp, with the sizes it
// granted, which init holds by now.
func mapSRQ(dev provider.Device, init *provider.SRQInit, resp []byte) (provider.RQ, error) {
	if len(resp) < createSRQRespSize {
		return nil, shortResp("CREATE_SRQ", len(resp), createSRQRespSize)
	}
	r := &rq{}
	if err := r.q.open(dev, mmInfo(resp, 0), recvWQEHdr+sgeSize, "SRQ"); err != nil {
		return nil, err
	}
	r.maxSGE = min(init.MaxSGE, uint32((r.q.elemSize()-recvWQEHdr)/sgeSize))
	r.q.setLimit(init.MaxWR)
	r.init()
	return r, nil
}

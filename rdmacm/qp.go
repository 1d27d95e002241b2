package rdmacm

import (
	"errors"
	"fmt"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/uverbs"
)

// ownedQP is what CreateQP made for an ID and destroys with it.
type ownedQP struct {
	send, recv     *cq.CQ
	sendCh, recvCh *cq.Channel // one each, so that waiting for one kind of completion never eats the other's event
	cqs            bool        // the CQs and channels are ours
}

// CreateQP creates the ID's QP in pd (the ID's shared PD when nil) and
// moves it to INIT with the attributes the kernel computes for the ID
// (rdma_create_qp). When init has no CQs, CreateQP makes a completion
// channel and a CQ for each of sends and receives, sized by init.Cap, as
// librdmacm does; SendCQ and RecvCQ return them, and the blocking helpers
// (GetSendComp, GetRecvComp) need them. The ID must be bound to a device.
func (id *ID) CreateQP(pd *uverbs.PD, init uverbs.QPInit) error {
	if id == nil {
		return ErrClosed
	}
	if err := id.alive(); err != nil {
		return err
	}
	if id.qp != nil {
		return fmt.Errorf("rdmacm: create QP: the ID has one: %w", uverbs.ErrInvalid)
	}
	if pd == nil {
		pd = id.PD()
	}
	if pd == nil {
		return fmt.Errorf("rdmacm: create QP: the ID is not bound to a device: %w", uverbs.ErrInvalid)
	}
	init.Type = uverbs.RC
	if id.ps == UDP {
		init.Type = uverbs.UD
	}
	var own ownedQP
	if init.SendCQ == nil && init.RecvCQ == nil {
		if err := own.makeCQs(pd.Context(), init.Cap); err != nil {
			return fmt.Errorf("rdmacm: create QP: %w", err)
		}
		init.SendCQ, init.RecvCQ = own.send, own.recv
	} else {
		own.send, _ = init.SendCQ.(*cq.CQ)
		own.recv, _ = init.RecvCQ.(*cq.CQ)
	}
	qp, err := pd.CreateQP(init)
	if err != nil {
		own.close()
		return fmt.Errorf("rdmacm: create QP: %w", err)
	}
	id.qp, id.own = qp, own
	if err := id.toInit(); err != nil {
		id.destroyQP()
		id.qp, id.own = nil, ownedQP{}
		return fmt.Errorf("rdmacm: create QP: %w", err)
	}
	return nil
}

func (o *ownedQP) makeCQs(dev *uverbs.Context, c uverbs.QPCap) error {
	o.cqs = true
	var err error
	for _, q := range []struct {
		ch   **cq.Channel
		cq   **cq.CQ
		size int
	}{{&o.sendCh, &o.send, c.MaxSendWR}, {&o.recvCh, &o.recv, c.MaxRecvWR}} {
		if *q.ch, err = cq.NewChannel(dev); err != nil {
			o.close()
			return err
		}
		if *q.cq, err = cq.New(dev, max(q.size, 1), &cq.Options{Channel: *q.ch}); err != nil {
			o.close()
			return err
		}
	}
	return nil
}

func (o *ownedQP) close() error {
	if !o.cqs {
		return nil
	}
	var errs []error
	for _, c := range []*cq.CQ{o.send, o.recv} {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	for _, ch := range []*cq.Channel{o.sendCh, o.recvCh} {
		if ch != nil {
			errs = append(errs, ch.Close())
		}
	}
	return errors.Join(errs...)
}

// destroyQP destroys the QP and what CreateQP made with it.
func (id *ID) destroyQP() error {
	if id.qp == nil {
		return nil
	}
	// The fields keep the closed objects, so that an operation racing
	// with Close finds them closed (ErrClosed) rather than nil.
	return errors.Join(id.qp.Close(), id.own.close())
}

// InitQPAttr returns the attributes and mask with which to move a QP of
// the ID to state (rdma_init_qp_attr). It is for QPs the caller creates
// and moves itself rather than with CreateQP; on iWARP the mask for RTR
// and RTS is empty, since the kernel moves the QP then.
func (id *ID) InitQPAttr(state uverbs.QPState) (uverbs.QPAttr, uverbs.QPAttrMask, error) {
	if id == nil {
		return uverbs.QPAttr{}, 0, ErrClosed
	}
	req := abi.UcmInitQPAttr{ID: id.handle, QPState: uint32(state)}
	var r abi.QPAttr
	if err := id.do(abi.RDMA_USER_CM_CMD_INIT_QP_ATTR, ucmd.Bytes(&req), 0, ucmd.Bytes(&r)); err != nil {
		return uverbs.QPAttr{}, 0, err
	}
	return qpAttr(&r), uverbs.QPAttrMask(r.QPAttrMask), nil
}

// modifyTo moves the QP to state with the kernel's attributes, letting
// adjust change them first. The kernel returns no attributes (mask 0)
// for the states it drives itself, on iWARP.
func (id *ID) modifyTo(state uverbs.QPState, adjust func(*uverbs.QPAttr, *uverbs.QPAttrMask)) error {
	attr, mask, err := id.InitQPAttr(state)
	if err != nil {
		return fmt.Errorf("%s attributes: %w", state, err)
	}
	if mask == 0 {
		return nil
	}
	if adjust != nil {
		adjust(&attr, &mask)
	}
	if err := id.qp.Modify(&attr, mask); err != nil {
		return fmt.Errorf("to %s: %w", state, err)
	}
	return nil
}

// toInit moves a new QP to INIT; a UD QP goes on to RTS, which needs no
// peer.
func (id *ID) toInit() error {
	if err := id.modifyTo(uverbs.QPSInit, nil); err != nil {
		return err
	}
	if id.ps != UDP {
		return nil
	}
	if err := id.qp.Modify(&uverbs.QPAttr{State: uverbs.QPSRTR}, uverbs.QPAttrState); err != nil {
		return err
	}
	return id.qp.Modify(&uverbs.QPAttr{State: uverbs.QPSRTS}, uverbs.QPAttrState|uverbs.QPAttrSQPSN)
}

// toRTS moves the QP through RTR to RTS, as ucma_modify_qp_rtr and
// ucma_modify_qp_rts do. respRes and depth, when not -1, replace the
// RDMA read limits the kernel proposes (max_dest_rd_atomic,
// max_rd_atomic).
func (id *ID) toRTS(respRes, depth int) error {
	// rdma-core refreshes INIT first: the port and P_Key may have been
	// chosen only by route resolution.
	if err := id.modifyTo(uverbs.QPSInit, nil); err != nil {
		return err
	}
	// The kernel leaves a limit of 0 out of its mask; it is set here all
	// the same, so that the QP (and PostSend's check) has it.
	if err := id.modifyTo(uverbs.QPSRTR, func(a *uverbs.QPAttr, m *uverbs.QPAttrMask) {
		if respRes >= 0 {
			a.MaxDestRdAtomic = uint8(respRes)
			*m |= uverbs.QPAttrMaxDestRdAtomic
		}
	}); err != nil {
		return err
	}
	return id.modifyTo(uverbs.QPSRTS, func(a *uverbs.QPAttr, m *uverbs.QPAttrMask) {
		if depth >= 0 {
			a.MaxRdAtomic = uint8(depth)
			*m |= uverbs.QPAttrMaxQPRdAtomic
		}
	})
}

// qpAttr converts struct ib_uverbs_qp_attr.
func qpAttr(r *abi.QPAttr) uverbs.QPAttr {
	return uverbs.QPAttr{
		State:        uverbs.QPState(r.QPState),
		CurState:     uverbs.QPState(r.CurQPState),
		PathMTU:      uverbs.MTU(r.PathMTU),
		PathMigState: uint8(r.PathMigState),
		QKey:         r.QKey,
		RQPSN:        r.RQPSN,
		SQPSN:        r.SQPSN,
		DestQPNum:    r.DestQPNum,
		Access:       uverbs.Access(r.QPAccessFlags),
		Cap: uverbs.QPCap{
			MaxSendWR: int(r.MaxSendWr), MaxRecvWR: int(r.MaxRecvWr),
			MaxSendSGE: int(r.MaxSendSGE), MaxRecvSGE: int(r.MaxRecvSGE),
			MaxInlineData: int(r.MaxInlineData),
		},
		AH:              ahAttr(&r.AHAttr),
		AltAH:           ahAttr(&r.AltAHAttr),
		PKeyIndex:       r.PKeyIndex,
		AltPKeyIndex:    r.AltPKeyIndex,
		EnSQDAsync:      r.EnSQDAsyncNotify != 0,
		SQDraining:      r.SQDraining != 0,
		MaxRdAtomic:     r.MaxRdAtomic,
		MaxDestRdAtomic: r.MaxDestRdAtomic,
		MinRNRTimer:     r.MinRNRTimer,
		Port:            r.PortNum,
		Timeout:         r.Timeout,
		RetryCnt:        r.RetryCnt,
		RNRRetry:        r.RNRRetry,
		AltPort:         r.AltPortNum,
		AltTimeout:      r.AltTimeout,
	}
}

func ahAttr(a *abi.AHAttr) uverbs.AHAttr {
	return uverbs.AHAttr{
		GRH: uverbs.GlobalRoute{
			DGID: a.GRH.DGID, FlowLabel: a.GRH.FlowLabel, SGIDIndex: a.GRH.SGIDIndex,
			HopLimit: a.GRH.HopLimit, TrafficClass: a.GRH.TrafficClass,
		},
		IsGlobal: a.IsGlobal != 0, DLID: a.DLID, SL: a.SL, SrcPathBits: a.SrcPathBits,
		StaticRate: a.StaticRate, Port: a.PortNum,
	}
}

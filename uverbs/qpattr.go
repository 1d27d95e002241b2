package uverbs

import (
	"fmt"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
)

// QPState is a queue pair's state (enum ibv_qp_state).
type QPState uint8

// QP states. A new QP is in RESET; a connection moves it through INIT,
// RTR (ready to receive) and RTS (ready to send). ERR flushes its work.
const (
	QPSReset QPState = 0 // IB_QPS_RESET
	QPSInit  QPState = 1 // IB_QPS_INIT
	QPSRTR   QPState = 2 // IB_QPS_RTR
	QPSRTS   QPState = 3 // IB_QPS_RTS
	QPSSQD   QPState = 4 // IB_QPS_SQD
	QPSSQE   QPState = 5 // IB_QPS_SQE
	QPSErr   QPState = 6 // IB_QPS_ERR
)

//go:generate go run ../hack/namegen -type QPState -trimprefix IB_QPS_ -doc "String returns the state's name as the verbs tools print it, e.g. \"RTR\"."

// QPAttrMask selects the QPAttr fields Modify sets and Query reads (enum
// ibv_qp_attr_mask).
type QPAttrMask uint32

// QP attribute mask bits.
const (
	QPAttrState           QPAttrMask = 1 << 0  // IB_QP_STATE
	QPAttrCurState        QPAttrMask = 1 << 1  // IB_QP_CUR_STATE
	QPAttrEnSQDAsync      QPAttrMask = 1 << 2  // IB_QP_EN_SQD_ASYNC_NOTIFY
	QPAttrAccessFlags     QPAttrMask = 1 << 3  // IB_QP_ACCESS_FLAGS
	QPAttrPKeyIndex       QPAttrMask = 1 << 4  // IB_QP_PKEY_INDEX
	QPAttrPort            QPAttrMask = 1 << 5  // IB_QP_PORT
	QPAttrQKey            QPAttrMask = 1 << 6  // IB_QP_QKEY
	QPAttrAV              QPAttrMask = 1 << 7  // IB_QP_AV
	QPAttrPathMTU         QPAttrMask = 1 << 8  // IB_QP_PATH_MTU
	QPAttrTimeout         QPAttrMask = 1 << 9  // IB_QP_TIMEOUT
	QPAttrRetryCnt        QPAttrMask = 1 << 10 // IB_QP_RETRY_CNT
	QPAttrRNRRetry        QPAttrMask = 1 << 11 // IB_QP_RNR_RETRY
	QPAttrRQPSN           QPAttrMask = 1 << 12 // IB_QP_RQ_PSN
	QPAttrMaxQPRdAtomic   QPAttrMask = 1 << 13 // IB_QP_MAX_QP_RD_ATOMIC
	QPAttrAltPath         QPAttrMask = 1 << 14 // IB_QP_ALT_PATH
	QPAttrMinRNRTimer     QPAttrMask = 1 << 15 // IB_QP_MIN_RNR_TIMER
	QPAttrSQPSN           QPAttrMask = 1 << 16 // IB_QP_SQ_PSN
	QPAttrMaxDestRdAtomic QPAttrMask = 1 << 17 // IB_QP_MAX_DEST_RD_ATOMIC
	QPAttrPathMigState    QPAttrMask = 1 << 18 // IB_QP_PATH_MIG_STATE
	QPAttrCap             QPAttrMask = 1 << 19 // IB_QP_CAP
	QPAttrDestQPN         QPAttrMask = 1 << 20 // IB_QP_DEST_QPN
)

// GlobalRoute is the GRH part of an address (struct ibv_global_route).
// RoCE always routes globally: DGID is the peer's GID and SGIDIndex the
// local GID table index (Context.GIDIndex finds it for an IP address).
type GlobalRoute struct {
	DGID         GID
	FlowLabel    uint32
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
}

// AHAttr is an address vector (struct ibv_ah_attr).
type AHAttr struct {
	GRH         GlobalRoute
	IsGlobal    bool
	DLID        uint16
	SL          uint8
	SrcPathBits uint8
	StaticRate  uint8
	Port        uint8
}

// QPAttr holds a QP's attributes (struct ibv_qp_attr).
type QPAttr struct {
	State           QPState
	CurState        QPState
	PathMTU         MTU
	PathMigState    uint8
	QKey            uint32
	RQPSN           uint32
	SQPSN           uint32
	DestQPNum       uint32
	Access          Access // what the remote peer may do (remote read, write, atomic)
	Cap             QPCap
	AH              AHAttr
	AltAH           AHAttr
	PKeyIndex       uint16
	AltPKeyIndex    uint16
	EnSQDAsync      bool
	SQDraining      bool
	MaxRdAtomic     uint8 // outstanding RDMA reads and atomics as initiator
	MaxDestRdAtomic uint8 // ... and as target
	MinRNRTimer     uint8
	Port            uint8
	Timeout         uint8
	RetryCnt        uint8
	RNRRetry        uint8
	AltPort         uint8
	AltTimeout      uint8
	SigAll          bool // Query only
}

func (a *AHAttr) dest() abi.QPDest {
	d := abi.QPDest{
		DGID:         a.GRH.DGID,
		FlowLabel:    a.GRH.FlowLabel,
		DLID:         a.DLID,
		SGIDIndex:    a.GRH.SGIDIndex,
		HopLimit:     a.GRH.HopLimit,
		TrafficClass: a.GRH.TrafficClass,
		SL:           a.SL,
		SrcPathBits:  a.SrcPathBits,
		StaticRate:   a.StaticRate,
		PortNum:      a.Port,
	}
	if a.IsGlobal {
		d.IsGlobal = 1
	}
	return d
}

func ahFromDest(d *abi.QPDest) AHAttr {
	return AHAttr{
		GRH: GlobalRoute{
			DGID:         d.DGID,
			FlowLabel:    d.FlowLabel,
			SGIDIndex:    d.SGIDIndex,
			HopLimit:     d.HopLimit,
			TrafficClass: d.TrafficClass,
		},
		IsGlobal:    d.IsGlobal != 0,
		DLID:        d.DLID,
		SL:          d.SL,
		SrcPathBits: d.SrcPathBits,
		StaticRate:  d.StaticRate,
		Port:        d.PortNum,
	}
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// Modify changes the attributes of the QP that mask selects
// (ibv_modify_qp). The kernel checks that the transition and the mask fit
// together; a wrong combination fails with ErrInvalid and EINVAL.
func (qp *QP) Modify(attr *QPAttr, mask QPAttrMask) error {
	if qp == nil {
		return ErrClosed
	}
	if qp.closed.Load() {
		return ErrClosed
	}
	if attr == nil {
		return invalid("uverbs: modify QP: nil attributes")
	}
	if mask&^abi.IB_QP_ATTR_STANDARD_BITS != 0 {
		return invalid("uverbs: modify QP: mask %#x has unknown bits", uint32(mask))
	}
	req := abi.ModifyQP{
		Dest:             attr.AH.dest(),
		AltDest:          attr.AltAH.dest(),
		QPHandle:         qp.handle,
		AttrMask:         uint32(mask),
		QKey:             attr.QKey,
		RQPSN:            attr.RQPSN,
		SQPSN:            attr.SQPSN,
		DestQPNum:        attr.DestQPNum,
		QPAccessFlags:    uint32(attr.Access),
		PKeyIndex:        attr.PKeyIndex,
		AltPKeyIndex:     attr.AltPKeyIndex,
		QPState:          uint8(attr.State),
		CurQPState:       uint8(attr.CurState),
		PathMTU:          uint8(attr.PathMTU),
		PathMigState:     attr.PathMigState,
		EnSQDAsyncNotify: b2u(attr.EnSQDAsync),
		MaxRdAtomic:      attr.MaxRdAtomic,
		MaxDestRdAtomic:  attr.MaxDestRdAtomic,
		MinRNRTimer:      attr.MinRNRTimer,
		PortNum:          attr.Port,
		Timeout:          attr.Timeout,
		RetryCnt:         attr.RetryCnt,
		RNRRetry:         attr.RNRRetry,
		AltPortNum:       attr.AltPort,
		AltTimeout:       attr.AltTimeout,
	}
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_MODIFY_QP, Req: ucmd.Bytes(&req)}
	if err := qp.do(&cmd); err != nil {
		return fmt.Errorf("uverbs: modify QP %d (mask %#x): %w", qp.num, uint32(mask), verbs.Public(err))
	}
	if mask&QPAttrMaxQPRdAtomic != 0 {
		qp.setNoReads(attr.MaxRdAtomic == 0)
	}
	if mask&QPAttrState != 0 {
		qp.setState(attr.State)
		qp.modified(uint32(attr.State))
	}
	return nil
}

// modified tells a driver whose queues follow the QP's state
// (provider.StateTracker: mlx5) the state MODIFY_QP set, with the data
// path kept out of both queues, unless the QP was closed meanwhile.
func (qp *QP) modified(state uint32) {
	st, ok := qp.sq.(provider.StateTracker)
	if !ok {
		return
	}
	qp.quiesce()
	defer qp.resume()
	if !qp.closed.Load() {
		st.Modified(state)
	}
}

// Query returns the QP's attributes (ibv_query_qp). mask says which the
// caller needs; the kernel may return more.
func (qp *QP) Query(mask QPAttrMask) (QPAttr, error) {
	if qp == nil {
		return QPAttr{}, ErrClosed
	}
	req := abi.QueryQP{QPHandle: qp.handle, AttrMask: uint32(mask)}
	var r abi.QueryQPResp
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_QUERY_QP, Req: ucmd.Bytes(&req), Resp: ucmd.Bytes(&r)}
	if err := qp.do(&cmd); err != nil {
		return QPAttr{}, fmt.Errorf("uverbs: query QP %d: %w", qp.num, verbs.Public(err))
	}
	return QPAttr{
		State:        QPState(r.QPState),
		CurState:     QPState(r.CurQPState),
		PathMTU:      MTU(r.PathMTU),
		PathMigState: r.PathMigState,
		QKey:         r.QKey,
		RQPSN:        r.RQPSN,
		SQPSN:        r.SQPSN,
		DestQPNum:    r.DestQPNum,
		Access:       Access(r.QPAccessFlags),
		Cap: QPCap{
			MaxSendWR:     int(r.MaxSendWr),
			MaxRecvWR:     int(r.MaxRecvWr),
			MaxSendSGE:    int(r.MaxSendSGE),
			MaxRecvSGE:    int(r.MaxRecvSGE),
			MaxInlineData: int(r.MaxInlineData),
		},
		AH:              ahFromDest(&r.Dest),
		AltAH:           ahFromDest(&r.AltDest),
		PKeyIndex:       r.PKeyIndex,
		AltPKeyIndex:    r.AltPKeyIndex,
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
		SigAll:          r.SQSigAll != 0,
	}, nil
}

// do runs a command on the QP unless it is closed.
func (qp *QP) do(cmd *ucmd.Cmd) error { return qp.destroy.Do(qp.core, cmd) }

func init() {
	verbs.SetQPReads = func(q any, depth uint8) {
		if qp, ok := q.(*QP); ok && qp != nil {
			qp.setNoReads(depth == 0)
		}
	}
}

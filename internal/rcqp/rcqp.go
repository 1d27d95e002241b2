// Package rcqp moves an RC QP through the states of a connection whose
// peer's numbers came out of band, as the verbs tools that cmd clones do
// (pp_connect_ctx in ibv_rc_pingpong, perftest's ctx_modify_qp_to_rtr
// and _rts).
package rcqp

import "github.com/purerdma/purerdma/uverbs"

// Init moves a new QP to INIT on port, with P_Key index 0 and access
// for the peer.
func Init(qp *uverbs.QP, port uint8, access uverbs.Access) error {
	attr := uverbs.QPAttr{State: uverbs.QPSInit, PKeyIndex: 0, Port: port, Access: access}
	return qp.Modify(&attr, uverbs.QPAttrState|uverbs.QPAttrPKeyIndex|uverbs.QPAttrPort|uverbs.QPAttrAccessFlags)
}

// Path is what a QP in INIT needs to connect to its peer: the peer's
// numbers from the exchange and the local path settings.
type Path struct {
	Port      uint8
	MTU       uverbs.MTU
	SL        uint8
	SGIDIndex uint8
	// Global routes through a GRH to DGID: RoCE needs it, InfiniBand
	// within a subnet uses DLID alone.
	Global  bool
	DGID    uverbs.GID
	DLID    uint16
	DestQPN uint32
	DestPSN uint32 // the peer's first PSN, which our receive side expects
	PSN     uint32 // our first PSN
	// RdAtomic is how many RDMA reads and atomics may be in flight, each
	// way.
	RdAtomic uint8
}

// Connect moves qp from INIT through RTR to RTS along p, with the tools'
// timeouts and retry counts. On failure it returns the state it did not
// reach, for the tools' messages.
func Connect(qp *uverbs.QP, p Path) (uverbs.QPState, error) {
	attr := uverbs.QPAttr{
		State:           uverbs.QPSRTR,
		PathMTU:         p.MTU,
		DestQPNum:       p.DestQPN,
		RQPSN:           p.DestPSN,
		MaxDestRdAtomic: p.RdAtomic,
		MinRNRTimer:     12,
		AH:              uverbs.AHAttr{DLID: p.DLID, SL: p.SL, Port: p.Port},
	}
	if p.Global {
		attr.AH.IsGlobal = true
		attr.AH.GRH.HopLimit = 1
		attr.AH.GRH.DGID = p.DGID
		attr.AH.GRH.SGIDIndex = p.SGIDIndex
	}
	if err := qp.Modify(&attr, uverbs.QPAttrState|uverbs.QPAttrAV|uverbs.QPAttrPathMTU|
		uverbs.QPAttrDestQPN|uverbs.QPAttrRQPSN|uverbs.QPAttrMaxDestRdAtomic|uverbs.QPAttrMinRNRTimer); err != nil {
		return uverbs.QPSRTR, err
	}
	attr.State = uverbs.QPSRTS
	attr.Timeout = 14
	attr.RetryCnt = 7
	attr.RNRRetry = 7
	attr.SQPSN = p.PSN
	attr.MaxRdAtomic = p.RdAtomic
	if err := qp.Modify(&attr, uverbs.QPAttrState|uverbs.QPAttrTimeout|uverbs.QPAttrRetryCnt|
		uverbs.QPAttrRNRRetry|uverbs.QPAttrSQPSN|uverbs.QPAttrMaxQPRdAtomic); err != nil {
		return uverbs.QPSRTS, err
	}
	return uverbs.QPSRTS, nil
}

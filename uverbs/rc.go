package uverbs

import "fmt"

// Init moves a new QP from RESET to INIT on port (numbered from 1), with
// P_Key index 0, allowing the remote peer what access says (RemoteWrite,
// RemoteRead, RemoteAtomic; 0 for sends alone). Receives may be posted
// from INIT on, so a QP can be ready for its peer's first message before
// it connects (ConnectRC). It is the first step of pp_connect_ctx's
// sequence in ibv_rc_pingpong, for RC and UC QPs; a UD QP needs a QKey
// and takes Modify.
func (qp *QP) Init(port uint8, access Access) error {
	attr := QPAttr{State: QPSInit, PKeyIndex: 0, Port: port, Access: access}
	return qp.Modify(&attr, QPAttrState|QPAttrPKeyIndex|QPAttrPort|QPAttrAccessFlags)
}

// RCPath is what an RC QP in INIT needs to connect to its peer
// (ConnectRC): the numbers the peer sent over an out-of-band channel (a
// TCP socket in ibv_rc_pingpong and perftest), and the local path
// settings.
type RCPath struct {
	// Port is the local port, numbered from 1.
	Port uint8
	// MTU is the path MTU, at most the smaller of the two ports'
	// PortAttr.ActiveMTU.
	MTU MTU
	// SL is the service level.
	SL uint8
	// Global routes through a global route header to DGID, the peer's
	// GID, from the local GID at SGIDIndex (Context.GIDIndex finds the
	// one of an IP address). RoCE needs it; InfiniBand within a subnet
	// addresses by DLID alone.
	Global    bool
	DGID      GID
	SGIDIndex uint8
	// HopLimit bounds the routers the GRH may cross on InfiniBand; 0
	// means 1, the verbs tools' value. On RoCE the kernel replaces it
	// with the hop limit of the IP route to the peer when it resolves
	// the peer's MAC address (Query then reports that, 64 by default).
	HopLimit uint8
	// DLID is the peer port's LID on InfiniBand; 0 on RoCE.
	DLID uint16
	// DestQPN is the peer's QP number, DestPSN the first packet sequence
	// number the peer sends, which our receive side then expects.
	DestQPN uint32
	DestPSN uint32
	// PSN is our first packet sequence number, the peer's DestPSN.
	PSN uint32
	// RdAtomic is how many RDMA reads and atomics may be outstanding
	// each way: this QP's as initiator, and the peer's towards it as
	// target. 0 allows none.
	RdAtomic uint8
}

// The timers and retry counts of ConnectRC: those of ibv_rc_pingpong and
// perftest, which rdma-core's users have come to expect.
const (
	rcMinRNRTimer = 12 // 0.64 ms before the peer retries a send we had no receive for
	rcTimeout     = 14 // 4.096 µs << 14 ≈ 67 ms before an unacknowledged packet is resent
	rcRetryCnt    = 7  // resends of an unacknowledged packet before the QP fails
	rcRNRRetry    = 7  // 7: retry a receiver-not-ready NAK forever
)

// ConnectRC moves an RC QP in INIT (see Init) through RTR to RTS towards
// the peer that p describes, as pp_connect_ctx does in ibv_rc_pingpong:
// a minimum RNR timer of 12, a local ACK timeout of 14, 7 transport
// retries and unlimited RNR retries. Other values need Modify.
//
// Both sides call it with the other's QP number and PSN; sends work once
// both are in RTS. When a step fails, the error is a *TransitionError
// that names the state the QP did not reach; errors.Is still matches the
// error of Modify underneath (ErrInvalid, an errno). A QP other than RC
// fails with ErrInvalid before any system call.
//
// Connections through the connection manager (package rdmacm) need none
// of this: rdmacm moves its QPs itself.
func (qp *QP) ConnectRC(p RCPath) error {
	if qp == nil || qp.closed.Load() {
		return ErrClosed
	}
	if qp.typ != RC {
		return invalid("uverbs: ConnectRC on a %s QP", qp.typ)
	}
	attr := QPAttr{
		State:           QPSRTR,
		PathMTU:         p.MTU,
		DestQPNum:       p.DestQPN,
		RQPSN:           p.DestPSN,
		MaxDestRdAtomic: p.RdAtomic,
		MinRNRTimer:     rcMinRNRTimer,
		AH:              AHAttr{DLID: p.DLID, SL: p.SL, Port: p.Port},
	}
	if p.Global {
		attr.AH.IsGlobal = true
		attr.AH.GRH = GlobalRoute{DGID: p.DGID, SGIDIndex: p.SGIDIndex, HopLimit: max(p.HopLimit, 1)}
	}
	if err := qp.Modify(&attr, QPAttrState|QPAttrAV|QPAttrPathMTU|QPAttrDestQPN|
		QPAttrRQPSN|QPAttrMaxDestRdAtomic|QPAttrMinRNRTimer); err != nil {
		return &TransitionError{State: QPSRTR, Err: err}
	}
	attr.State = QPSRTS
	attr.Timeout = rcTimeout
	attr.RetryCnt = rcRetryCnt
	attr.RNRRetry = rcRNRRetry
	attr.SQPSN = p.PSN
	attr.MaxRdAtomic = p.RdAtomic
	if err := qp.Modify(&attr, QPAttrState|QPAttrTimeout|QPAttrRetryCnt|
		QPAttrRNRRetry|QPAttrSQPSN|QPAttrMaxQPRdAtomic); err != nil {
		return &TransitionError{State: QPSRTS, Err: err}
	}
	return nil
}

// TransitionError is the error of a QP state sequence (ConnectRC) that
// failed partway, so that a caller can say which step failed, as the
// verbs tools do ("Failed to modify QP to RTR"). The QP stays in the
// last state it reached.
type TransitionError struct {
	State QPState // the state the QP did not reach
	Err   error   // Modify's error
}

// Error names the state the QP did not reach and Modify's error.
func (e *TransitionError) Error() string {
	return fmt.Sprintf("uverbs: moving QP to %s: %v", e.State, e.Err)
}

// Unwrap returns Modify's error, for errors.Is and errors.As.
func (e *TransitionError) Unwrap() error { return e.Err }

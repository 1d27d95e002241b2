package cq

import (
	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/uverbs"
)

// WC is a work completion (struct ibv_wc). When Status is not Success,
// only ID, Status, QPNum and VendorErr are valid, as ibv_poll_cq(3) says;
// Poll sets the other fields to zero then, so that they cannot be misread.
type WC struct {
	ID        uint64 // the wr_id of the completed work request
	Status    Status
	Opcode    Opcode
	VendorErr uint32 // the provider's error syndrome
	ByteLen   uint32 // bytes transferred
	// Imm is the immediate data in host byte order when Flags has
	// WithImm, or the invalidated rkey when Flags has WithInv.
	Imm          uint32
	QPNum        uint32 // the local QP the work request ran on
	SrcQP        uint32 // the remote QP (UD only)
	Flags        Flags
	PKeyIndex    uint16 // GSI QPs only
	SLID         uint16
	SL           uint8
	DLIDPathBits uint8
	// The drivers' completion (provider.WC) has the port number here:
	// with this field the two types have one layout (TestWCLayout), so
	// the drivers Poll knows write straight into its slice.
	_ [2]byte
}

// fill sets w from a provider's completion, zeroing what an error leaves
// undefined. A success sets every field one by one, straight into w: a
// composite literal of them all is built in a temporary first and then
// copied with wide loads right after narrow stores, which costs more than
// the fields themselves.
func (w *WC) fill(p *provider.WC) {
	if p.Status != abi.IB_WC_SUCCESS {
		*w = WC{ID: p.ID, Status: Status(p.Status), QPNum: p.QPNum, VendorErr: p.VendorErr}
		return
	}
	w.ID = p.ID
	w.Status = Success
	w.Opcode = Opcode(p.Opcode)
	w.VendorErr = p.VendorErr
	w.ByteLen = p.ByteLen
	w.Imm = p.ImmData
	w.QPNum = p.QPNum
	w.SrcQP = p.SrcQP
	w.Flags = Flags(p.Flags)
	w.PKeyIndex = p.PKeyIndex
	w.SLID = p.SLID
	w.SL = p.SL
	w.DLIDPathBits = p.DLIDPathBits
}

// clearFailed zeroes what a failed completion leaves undefined, as fill
// does.
func (w *WC) clearFailed() {
	*w = WC{ID: w.ID, Status: w.Status, QPNum: w.QPNum, VendorErr: w.VendorErr}
}

// Err returns nil for a successful completion and otherwise an error that
// matches ErrCompletion and carries the status.
func (w *WC) Err() error {
	if w.Status == Success {
		return nil
	}
	return &CompletionError{ID: w.ID, Status: w.Status, VendorErr: w.VendorErr}
}

// Status is a completion status (enum ibv_wc_status).
type Status uint32

// Completion statuses.
const (
	Success          Status = 0  // IB_WC_SUCCESS
	LocLenErr        Status = 1  // IB_WC_LOC_LEN_ERR
	LocQPOpErr       Status = 2  // IB_WC_LOC_QP_OP_ERR
	LocEECOpErr      Status = 3  // IB_WC_LOC_EEC_OP_ERR
	LocProtErr       Status = 4  // IB_WC_LOC_PROT_ERR
	WRFlushErr       Status = 5  // IB_WC_WR_FLUSH_ERR
	MWBindErr        Status = 6  // IB_WC_MW_BIND_ERR
	BadRespErr       Status = 7  // IB_WC_BAD_RESP_ERR
	LocAccessErr     Status = 8  // IB_WC_LOC_ACCESS_ERR
	RemInvReqErr     Status = 9  // IB_WC_REM_INV_REQ_ERR
	RemAccessErr     Status = 10 // IB_WC_REM_ACCESS_ERR
	RemOpErr         Status = 11 // IB_WC_REM_OP_ERR
	RetryExcErr      Status = 12 // IB_WC_RETRY_EXC_ERR
	RNRRetryExcErr   Status = 13 // IB_WC_RNR_RETRY_EXC_ERR
	LocRDDViolErr    Status = 14 // IB_WC_LOC_RDD_VIOL_ERR
	RemInvRdReqErr   Status = 15 // IB_WC_REM_INV_RD_REQ_ERR
	RemAbortErr      Status = 16 // IB_WC_REM_ABORT_ERR
	InvEECNErr       Status = 17 // IB_WC_INV_EECN_ERR
	InvEECStateErr   Status = 18 // IB_WC_INV_EEC_STATE_ERR
	FatalErr         Status = 19 // IB_WC_FATAL_ERR
	RespTimeoutErr   Status = 20 // IB_WC_RESP_TIMEOUT_ERR
	GeneralErr       Status = 21 // IB_WC_GENERAL_ERR
	TMErr            Status = 22
	TMRndvIncomplete Status = 23
)

// statusNames are ibv_wc_status_str's texts (rdma-core's
// libibverbs/enum_strs.c), keyed by the constants as there. They are no C
// constant names, so hack/namegen cannot make them: they are kept by hand.
var statusNames = [...]string{
	Success:          "success",
	LocLenErr:        "local length error",
	LocQPOpErr:       "local QP operation error",
	LocEECOpErr:      "local EE context operation error",
	LocProtErr:       "local protection error",
	WRFlushErr:       "Work Request Flushed Error",
	MWBindErr:        "memory management operation error",
	BadRespErr:       "bad response error",
	LocAccessErr:     "local access error",
	RemInvReqErr:     "remote invalid request error",
	RemAccessErr:     "remote access error",
	RemOpErr:         "remote operation error",
	RetryExcErr:      "transport retry counter exceeded",
	RNRRetryExcErr:   "RNR retry counter exceeded",
	LocRDDViolErr:    "local RDD violation error",
	RemInvRdReqErr:   "remote invalid RD request",
	RemAbortErr:      "aborted error",
	InvEECNErr:       "invalid EE context number",
	InvEECStateErr:   "invalid EE context state",
	FatalErr:         "fatal error",
	RespTimeoutErr:   "response timeout error",
	GeneralErr:       "general error",
	TMErr:            "TM error",
	TMRndvIncomplete: "TM software rendezvous",
}

// String returns the text ibv_wc_status_str gives.
func (s Status) String() string {
	if int(s) < len(statusNames) && statusNames[s] != "" {
		return statusNames[s]
	}
	return "unknown"
}

// Opcode is the kind of work a completion reports (enum ibv_wc_opcode).
// Receive completions have the Recv bit set.
type Opcode uint32

// Completion opcodes.
const (
	OpSend            Opcode = 0   // IB_WC_SEND
	OpRDMAWrite       Opcode = 1   // IB_WC_RDMA_WRITE
	OpRDMARead        Opcode = 2   // IB_WC_RDMA_READ
	OpCompSwap        Opcode = 3   // IB_WC_COMP_SWAP
	OpFetchAdd        Opcode = 4   // IB_WC_FETCH_ADD
	OpBindMW          Opcode = 5   // IB_WC_BIND_MW
	OpLocalInv        Opcode = 6   // IB_WC_LOCAL_INV
	OpTSO             Opcode = 7   // IB_WC_LSO
	OpFlush           Opcode = 8   // IB_WC_FLUSH: RDMA FLUSH, Linux 6.2+
	OpAtomicWrite     Opcode = 9   // IB_WC_ATOMIC_WRITE: RDMA ATOMIC WRITE, Linux 6.2+
	OpRecv            Opcode = 128 // IB_WC_RECV
	OpRecvRDMAWithImm Opcode = 129 // IB_WC_RECV_RDMA_WITH_IMM
)

// Opcode.String prints the IB_WC_ names, but libibverbs' TSO for the
// kernel's LSO.
//go:generate go run ../hack/namegen -type Opcode -trimprefix IB_WC_ -rename LSO=TSO -doc "String returns the name of the IBV_WC_ constant without its prefix."

// Flags describe a completion (enum ibv_wc_flags).
type Flags uint32

// Completion flags.
const (
	GRH      Flags = 1 << 0 // IB_WC_GRH: a GRH is present (UD)
	WithImm  Flags = 1 << 1 // IB_WC_WITH_IMM: Imm holds immediate data
	WithInv  Flags = 1 << 2 // IB_WC_WITH_INVALIDATE
	IPCsumOK Flags = 1 << 3 // IB_WC_IP_CSUM_OK
)

// Addr returns what a receive completion says about its sender, for
// uverbs.Context.AHAttrFromWC to build the address that replies to it.
func (w *WC) Addr() uverbs.WCAddr {
	return uverbs.WCAddr{SLID: w.SLID, SL: w.SL, DLIDPathBits: w.DLIDPathBits, GRH: w.Flags&GRH != 0}
}

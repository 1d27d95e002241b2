// Structs and constants from include/uapi/rdma/siw-abi.h (Linux 6.1;
// identical to rdma-core v43's kernel-headers/rdma/siw-abi.h): the driver
// data of the software iWARP (siw) driver and the layout of its mapped
// queues. siw marks each queue element valid with SIW_WQE_VALID in its
// flags instead of sharing producer and consumer indices.
//
// The sizes and offsets are checked against the C compiler in
// siw_abi_test.go.

package abi

// SIW_NODE_DESC_COMMON is the node description of siw devices.
const SIW_NODE_DESC_COMMON = "Software iWARP stack"

// Limits of the siw ABI.
const (
	SIW_ABI_VERSION    = 1
	SIW_MAX_SGE        = 6
	SIW_UOBJ_MAX_KEY   = 0x08FFFF               // largest mmap key
	SIW_INVAL_UOBJ_KEY = SIW_UOBJ_MAX_KEY + 1   // "no mapping" in the ABI; also a valid offset since Linux 5.4 (internal/provider/siw: mapCQ)
	SIW_MAX_INLINE     = 16 * (SIW_MAX_SGE - 1) // sizeof(struct siw_sge) * (SIW_MAX_SGE - 1): inline data occupies sge[1:]
)

// SiwUrespCreateCQ is the driver response of CREATE_CQ.
//
// struct siw_uresp_create_cq
type SiwUrespCreateCQ struct {
	CQID   uint32
	NumCQE uint32
	CQKey  uint64 // mmap offset of the CQ, or SIW_INVAL_UOBJ_KEY
}

// SiwUrespCreateQP is the driver response of CREATE_QP.
//
// struct siw_uresp_create_qp
type SiwUrespCreateQP struct {
	QPID   uint32
	NumSQE uint32
	NumRQE uint32
	Pad    uint32
	SQKey  uint64
	RQKey  uint64
}

// SiwUreqRegMR is the driver data of REG_MR.
//
// struct siw_ureq_reg_mr
type SiwUreqRegMR struct {
	STagKey  uint8
	Reserved [3]uint8
	Pad      uint32
}

// SiwUrespRegMR is the driver response of REG_MR.
//
// struct siw_uresp_reg_mr
type SiwUrespRegMR struct {
	STag uint32
	Pad  uint32
}

// SiwUrespCreateSRQ is the driver response of CREATE_SRQ.
//
// struct siw_uresp_create_srq
type SiwUrespCreateSRQ struct {
	NumRQE uint32
	Pad    uint32
	SRQKey uint64
}

// SiwUrespAllocCtx is the driver response of GET_CONTEXT.
//
// struct siw_uresp_alloc_ctx
type SiwUrespAllocCtx struct {
	DevID uint32
	Pad   uint32
}

// enum siw_opcode: SiwSQE.Opcode and SiwCQE.Opcode.
const (
	SIW_OP_WRITE           = 0
	SIW_OP_READ            = 1
	SIW_OP_READ_LOCAL_INV  = 2
	SIW_OP_SEND            = 3
	SIW_OP_SEND_WITH_IMM   = 4
	SIW_OP_SEND_REMOTE_INV = 5
	SIW_OP_FETCH_AND_ADD   = 6 // unsupported
	SIW_OP_COMP_AND_SWAP   = 7 // unsupported
	SIW_OP_RECEIVE         = 8
	SIW_OP_READ_RESPONSE   = 9  // provider internal
	SIW_OP_INVAL_STAG      = 10 // kernel clients only
	SIW_OP_REG_MR          = 11 // kernel clients only
	SIW_NUM_OPCODES        = 12
)

// SiwSGE is a scatter/gather element (the layout of ibv_sge).
//
// struct siw_sge
type SiwSGE struct {
	LAddr  uint64
	Length uint32
	LKey   uint32
}

// enum siw_wqe_flags: the Flags of SiwSQE, SiwRQE and SiwCQE.
const (
	SIW_WQE_VALID      = 1 << 0
	SIW_WQE_INLINE     = 1 << 1
	SIW_WQE_SIGNALLED  = 1 << 2
	SIW_WQE_SOLICITED  = 1 << 3
	SIW_WQE_READ_FENCE = 1 << 4
	SIW_WQE_REM_INVAL  = 1 << 5
	SIW_WQE_COMPLETED  = 1 << 6
)

// SiwSQE is a send queue element. With SIW_WQE_INLINE the inline data
// starts at SGE[1]. The C union of sge[] and access makes Access (for
// SIW_OP_REG_MR, kernel clients only) overlay SGE[0].LAddr.
//
// struct siw_sqe
type SiwSQE struct {
	ID     uint64
	Flags  uint16 // SIW_WQE_*
	NumSGE uint8
	Opcode uint8 // SIW_OP_*
	RKey   uint32
	RAddr  uint64 // union: raddr or base_mr
	SGE    [SIW_MAX_SGE]SiwSGE
}

// SiwRQE is a receive queue element.
//
// struct siw_rqe
type SiwRQE struct {
	ID     uint64
	Flags  uint16 // SIW_WQE_*
	NumSGE uint8
	Opcode uint8 // set by the kernel; ignored if set by user space
	Unused uint32
	SGE    [SIW_MAX_SGE]SiwSGE
}

// enum siw_notify_flags: SiwCQCtrl.Flags.
const (
	SIW_NOTIFY_NOT             = 0
	SIW_NOTIFY_SOLICITED       = 1 << 0
	SIW_NOTIFY_NEXT_COMPLETION = 1 << 1
	SIW_NOTIFY_MISSED_EVENTS   = 1 << 2
	SIW_NOTIFY_ALL             = SIW_NOTIFY_SOLICITED | SIW_NOTIFY_NEXT_COMPLETION | SIW_NOTIFY_MISSED_EVENTS
)

// enum siw_wc_status: SiwCQE.Status. These are not the IB_WC_* values.
const (
	SIW_WC_SUCCESS         = 0
	SIW_WC_LOC_LEN_ERR     = 1
	SIW_WC_LOC_PROT_ERR    = 2
	SIW_WC_LOC_QP_OP_ERR   = 3
	SIW_WC_WR_FLUSH_ERR    = 4
	SIW_WC_BAD_RESP_ERR    = 5
	SIW_WC_LOC_ACCESS_ERR  = 6
	SIW_WC_REM_ACCESS_ERR  = 7
	SIW_WC_REM_INV_REQ_ERR = 8
	SIW_WC_GENERAL_ERR     = 9
	SIW_NUM_WC_STATUS      = 10
)

// SiwCQE is a completion queue element.
//
// struct siw_cqe
type SiwCQE struct {
	ID      uint64
	Flags   uint8  // SIW_WQE_VALID while the element belongs to user space
	Opcode  uint8  // SIW_OP_*
	Status  uint16 // SIW_WC_*
	Bytes   uint32
	ImmData uint64 // union: imm_data, or inval_stag (__u32) in its first 4 bytes
	QPID    uint64 // union: qp_id, or the kernel's struct ib_qp pointer
}

// SiwCQCtrl sits after the CQ elements in the mapped CQ and arms it.
//
// struct siw_cq_ctrl
type SiwCQCtrl struct {
	Flags uint32 // SIW_NOTIFY_*
	Pad   uint32
}

// Structs and constants from include/uapi/rdma/mlx5-abi.h (Linux 6.1 and
// 6.12; the parts used here are identical to rdma-core v44's
// kernel-headers/rdma/mlx5-abi.h): the driver data of the ConnectX (mlx5)
// driver's verbs commands. Only what the mlx5 provider sends and reads is
// here: GET_CONTEXT, ALLOC_PD, CREATE_CQ, RESIZE_CQ, CREATE_SRQ, CREATE_QP
// and CREATE_AH.
//
// Unlike rxe and siw, mlx5 keeps its queues in user memory: the requests
// carry the addresses of the queue buffer and doorbell record the provider
// allocated, and the kernel pins them. The device formats inside those
// buffers (WQE segments, CQEs) are not kernel ABI and live in
// internal/provider/mlx5.
//
// The sizes and offsets are checked against the C compiler in
// zlayout_test.go (hack/abigen, test MLX5ABI).

package abi

// MLX5_IB_UVERBS_ABI_VERSION is the uverbs ABI version mlx5 devices report.
const MLX5_IB_UVERBS_ABI_VERSION = 1

// MLX5CreateQP.Flags.
const (
	MLX5_QP_FLAG_SIGNATURE                = 1 << 0
	MLX5_QP_FLAG_SCATTER_CQE              = 1 << 1
	MLX5_QP_FLAG_TUNNEL_OFFLOADS          = 1 << 2
	MLX5_QP_FLAG_BFREG_INDEX              = 1 << 3
	MLX5_QP_FLAG_TYPE_DCT                 = 1 << 4
	MLX5_QP_FLAG_TYPE_DCI                 = 1 << 5
	MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_UC     = 1 << 6
	MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_MC     = 1 << 7
	MLX5_QP_FLAG_ALLOW_SCATTER_CQE        = 1 << 8
	MLX5_QP_FLAG_PACKET_BASED_CREDIT_MODE = 1 << 9
	MLX5_QP_FLAG_UAR_PAGE_INDEX           = 1 << 10
	MLX5_QP_FLAG_DCI_STREAM               = 1 << 11
)

// MLX5CreateSRQ.Flags.
const MLX5_SRQ_FLAG_SIGNATURE = 1 << 0

// MLX5AllocUcontextReqV2.LibCaps (enum mlx5_lib_caps): what the library
// can do with UARs.
const (
	MLX5_LIB_CAP_4K_UAR  = 1 << 0 // UARs of 4 KiB inside a larger system page
	MLX5_LIB_CAP_DYN_UAR = 1 << 1 // UARs allocated on demand (MLX5_IB_OBJECT_UAR)
)

// MLX5AllocUcontextReqV2.Flags (enum mlx5_ib_alloc_uctx_v2_flags).
const MLX5_IB_ALLOC_UCTX_DEVX = 1 << 0

// MLX5AllocUcontextResp.CompMask (enum mlx5_ib_alloc_ucontext_resp_mask).
const (
	MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_CORE_CLOCK_OFFSET = 1 << 0
	MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_DUMP_FILL_MKEY    = 1 << 1
	MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_ECE               = 1 << 2
	MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_SQD2RTS           = 1 << 3
	MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_REAL_TIME_TS      = 1 << 4
	MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_MKEY_UPDATE_TAG   = 1 << 5
)

// MLX5AllocUcontextResp.CmdsSuppUHW (enum mlx5_user_cmds_supp_uhw): the
// commands that take driver data.
const (
	MLX5_USER_CMDS_SUPP_UHW_QUERY_DEVICE = 1 << 0
	MLX5_USER_CMDS_SUPP_UHW_CREATE_AH    = 1 << 1
)

// MLX5AllocUcontextResp.EthMinInline (enum mlx5_user_inline_mode), one
// more than the firmware's value so that 0 means "not reported".
const (
	MLX5_USER_INLINE_MODE_NA      = 0
	MLX5_USER_INLINE_MODE_NONE    = 1
	MLX5_USER_INLINE_MODE_L2      = 2
	MLX5_USER_INLINE_MODE_IP      = 3
	MLX5_USER_INLINE_MODE_TCP_UDP = 4
)

// MLX5CreateCQ.Flags (enum mlx5_ib_create_cq_flags).
const (
	MLX5_IB_CREATE_CQ_FLAGS_CQE_128B_PAD   = 1 << 0
	MLX5_IB_CREATE_CQ_FLAGS_UAR_PAGE_INDEX = 1 << 1
	MLX5_IB_CREATE_CQ_FLAGS_REAL_TIME_TS   = 1 << 2
)

// MLX5CreateQPResp.CompMask (enum mlx5_ib_create_qp_resp_mask).
const (
	MLX5_IB_CREATE_QP_RESP_MASK_TIRN         = 1 << 0
	MLX5_IB_CREATE_QP_RESP_MASK_TISN         = 1 << 1
	MLX5_IB_CREATE_QP_RESP_MASK_RQN          = 1 << 2
	MLX5_IB_CREATE_QP_RESP_MASK_SQN          = 1 << 3
	MLX5_IB_CREATE_QP_RESP_MASK_TIR_ICM_ADDR = 1 << 4
)

// The command of an mmap offset of the command file (enum
// mlx5_ib_mmap_cmd): offset = ((cmd << 8) | index) * page size.
const (
	MLX5_IB_MMAP_REGULAR_PAGE         = 0
	MLX5_IB_MMAP_GET_CONTIGUOUS_PAGES = 1
	MLX5_IB_MMAP_WC_PAGE              = 2
	MLX5_IB_MMAP_NC_PAGE              = 3
	MLX5_IB_MMAP_CORE_CLOCK           = 5
	MLX5_IB_MMAP_ALLOC_WC             = 6
	MLX5_IB_MMAP_CLOCK_INFO           = 7
	MLX5_IB_MMAP_DEVICE_MEM           = 8
)

// MLX5AllocUcontextReqV2 is the driver data of GET_CONTEXT. The kernel
// refuses fields it does not know unless they are zero, which is why
// rdma-core retries with shorter lengths on old kernels.
//
// struct mlx5_ib_alloc_ucontext_req_v2
type MLX5AllocUcontextReqV2 struct {
	TotalNumBfregs      uint32 // bfregs the library wants (static UARs)
	NumLowLatencyBfregs uint32 // of those, the ones dedicated to one QP
	Flags               uint32 // MLX5_IB_ALLOC_UCTX_*
	CompMask            uint32
	MaxCQEVersion       uint8 // the newest CQE format the library parses
	Reserved0           uint8
	Reserved1           uint16
	Reserved2           uint32
	LibCaps             uint64 // MLX5_LIB_CAP_*
}

// MLX5AllocUcontextResp is the driver response of GET_CONTEXT.
//
// struct mlx5_ib_alloc_ucontext_resp
type MLX5AllocUcontextResp struct {
	QPTabSize          uint32
	BfRegSize          uint32 // bytes of one BlueFlame register (both halves)
	TotBfregs          uint32 // static bfregs; 0 when the library allocates UARs (MLX5_LIB_CAP_DYN_UAR)
	CacheLineSize      uint32
	MaxSQDescSz        uint16
	MaxRQDescSz        uint16
	MaxSendWQEBB       uint32
	MaxRecvWr          uint32
	MaxSRQRecvWr       uint32
	NumPorts           uint16
	FlowActionFlags    uint16
	CompMask           uint32 // MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_*
	ResponseLength     uint32
	CQEVersion         uint8 // the CQE format the kernel granted
	CmdsSuppUHW        uint8 // MLX5_USER_CMDS_SUPP_UHW_*
	EthMinInline       uint8 // MLX5_USER_INLINE_MODE_*
	ClockInfoVersions  uint8
	HCACoreClockOffset uint64
	LogUARSize         uint32
	NumUARsPerPage     uint32
	NumDynBfregs       uint32
	DumpFillMkey       uint32
}

// MLX5AllocPDResp is the driver response of ALLOC_PD.
//
// struct mlx5_ib_alloc_pd_resp
type MLX5AllocPDResp struct {
	PDN uint32
}

// MLX5CreateCQ is the driver data of CREATE_CQ (and of the extended
// command): the CQ buffer and doorbell record the library allocated.
//
// struct mlx5_ib_create_cq
type MLX5CreateCQ struct {
	BufAddr          uint64
	DBAddr           uint64
	CQESize          uint32
	CQECompEn        uint8
	CQECompResFormat uint8
	Flags            uint16 // MLX5_IB_CREATE_CQ_FLAGS_*
	UARPageIndex     uint16
	Reserved0        uint16
	Reserved1        uint32
}

// MLX5CreateCQResp is the driver response of CREATE_CQ.
//
// struct mlx5_ib_create_cq_resp
type MLX5CreateCQResp struct {
	CQN      uint32
	Reserved uint32
}

// MLX5ResizeCQ is the driver data of RESIZE_CQ.
//
// struct mlx5_ib_resize_cq
type MLX5ResizeCQ struct {
	BufAddr   uint64
	CQESize   uint16
	Reserved0 uint16
	Reserved1 uint32
}

// MLX5CreateSRQ is the driver data of CREATE_SRQ.
//
// struct mlx5_ib_create_srq
type MLX5CreateSRQ struct {
	BufAddr   uint64
	DBAddr    uint64
	Flags     uint32 // MLX5_SRQ_FLAG_*
	Reserved0 uint32
	UIdx      uint32
	Reserved1 uint32
}

// MLX5CreateSRQResp is the driver response of CREATE_SRQ.
//
// struct mlx5_ib_create_srq_resp
type MLX5CreateSRQResp struct {
	SRQN     uint32
	Reserved uint32
}

// MLX5CreateQPDCIStreams is MLX5CreateQP.DCIStreams.
//
// struct mlx5_ib_create_qp_dci_streams
type MLX5CreateQPDCIStreams struct {
	LogNumConcurent uint8
	LogNumErrored   uint8
}

// MLX5CreateQP is the driver data of CREATE_QP (and of the extended
// command). SQBufAddr is the union of sq_buf_addr and access_key.
//
// struct mlx5_ib_create_qp
type MLX5CreateQP struct {
	BufAddr    uint64
	DBAddr     uint64
	SQWQECount uint32
	RQWQECount uint32
	RQWQEShift uint32
	Flags      uint32 // MLX5_QP_FLAG_*
	UIdx       uint32
	BfregIndex uint32
	SQBufAddr  uint64
	ECEOptions uint32
	DCIStreams MLX5CreateQPDCIStreams
	Reserved   uint16
}

// MLX5CreateQPResp is the driver response of CREATE_QP.
//
// struct mlx5_ib_create_qp_resp
type MLX5CreateQPResp struct {
	BfregIndex uint32
	ECEOptions uint32
	CompMask   uint32 // MLX5_IB_CREATE_QP_RESP_MASK_*
	TIRN       uint32
	TISN       uint32
	RQN        uint32
	SQN        uint32
	Reserved1  uint32
	TIRICMAddr uint64
}

// MLX5CreateAHResp is the driver response of CREATE_AH: the destination
// MAC the kernel resolved for a RoCE address.
//
// struct mlx5_ib_create_ah_resp
type MLX5CreateAHResp struct {
	ResponseLength uint32
	DMAC           [6]uint8
	Reserved       [6]uint8
}

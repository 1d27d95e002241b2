// Structs and constants from include/uapi/rdma/ib_user_ioctl_verbs.h (Linux
// 6.1; identical to rdma-core v43's kernel-headers/rdma/). The flow action
// (ESP) structs and enums are left out.

package abi

// enum rdma_driver_id: the driver behind a device, as the uverbs ABI and
// RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID report it.
const (
	RDMA_DRIVER_UNKNOWN    = 0
	RDMA_DRIVER_MLX5       = 1
	RDMA_DRIVER_MLX4       = 2
	RDMA_DRIVER_CXGB3      = 3
	RDMA_DRIVER_CXGB4      = 4
	RDMA_DRIVER_MTHCA      = 5
	RDMA_DRIVER_BNXT_RE    = 6
	RDMA_DRIVER_OCRDMA     = 7
	RDMA_DRIVER_NES        = 8
	RDMA_DRIVER_I40IW      = 9
	RDMA_DRIVER_IRDMA      = RDMA_DRIVER_I40IW
	RDMA_DRIVER_VMW_PVRDMA = 10
	RDMA_DRIVER_QEDR       = 11
	RDMA_DRIVER_HNS        = 12
	RDMA_DRIVER_USNIC      = 13
	RDMA_DRIVER_RXE        = 14
	RDMA_DRIVER_HFI1       = 15
	RDMA_DRIVER_QIB        = 16
	RDMA_DRIVER_EFA        = 17
	RDMA_DRIVER_SIW        = 18
	RDMA_DRIVER_ERDMA      = 19
)

// The range of optional access flags: the kernel ignores those of them it
// does not know, unlike the other bits.
const (
	IB_UVERBS_ACCESS_OPTIONAL_FIRST = 1 << 20
	IB_UVERBS_ACCESS_OPTIONAL_LAST  = 1 << 29
)

// enum ib_uverbs_core_support: UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT.
const IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS = 1 << 0

// enum ib_uverbs_access_flags: MR, MW and QP access flags.
const (
	IB_UVERBS_ACCESS_LOCAL_WRITE      = 1 << 0
	IB_UVERBS_ACCESS_REMOTE_WRITE     = 1 << 1
	IB_UVERBS_ACCESS_REMOTE_READ      = 1 << 2
	IB_UVERBS_ACCESS_REMOTE_ATOMIC    = 1 << 3
	IB_UVERBS_ACCESS_MW_BIND          = 1 << 4
	IB_UVERBS_ACCESS_ZERO_BASED       = 1 << 5
	IB_UVERBS_ACCESS_ON_DEMAND        = 1 << 6
	IB_UVERBS_ACCESS_HUGETLB          = 1 << 7
	IB_UVERBS_ACCESS_FLUSH_GLOBAL     = 1 << 8 // since Linux 6.2
	IB_UVERBS_ACCESS_FLUSH_PERSISTENT = 1 << 9 // since Linux 6.2
	IB_UVERBS_ACCESS_RELAXED_ORDERING = IB_UVERBS_ACCESS_OPTIONAL_FIRST
	IB_UVERBS_ACCESS_OPTIONAL_RANGE   = (IB_UVERBS_ACCESS_OPTIONAL_LAST<<1 - 1) &^ (IB_UVERBS_ACCESS_OPTIONAL_FIRST - 1)
)

// enum ib_uverbs_srq_type: CreateXSRQ.SRQType and UVERBS_ATTR_CREATE_SRQ_TYPE.
const (
	IB_UVERBS_SRQT_BASIC = 0
	IB_UVERBS_SRQT_XRC   = 1
	IB_UVERBS_SRQT_TM    = 2
)

// enum ib_uverbs_wq_type.
const IB_UVERBS_WQT_RQ = 0

// enum ib_uverbs_wq_flags.
const (
	IB_UVERBS_WQ_FLAGS_CVLAN_STRIPPING       = 1 << 0
	IB_UVERBS_WQ_FLAGS_SCATTER_FCS           = 1 << 1
	IB_UVERBS_WQ_FLAGS_DELAY_DROP            = 1 << 2
	IB_UVERBS_WQ_FLAGS_PCI_WRITE_END_PADDING = 1 << 3
)

// enum ib_uverbs_qp_type: CreateQP.QPType and UVERBS_ATTR_CREATE_QP_TYPE.
const (
	IB_UVERBS_QPT_RC         = 2
	IB_UVERBS_QPT_UC         = 3
	IB_UVERBS_QPT_UD         = 4
	IB_UVERBS_QPT_RAW_PACKET = 8
	IB_UVERBS_QPT_XRC_INI    = 9
	IB_UVERBS_QPT_XRC_TGT    = 10
	IB_UVERBS_QPT_DRIVER     = 0xFF
)

// enum ib_uverbs_qp_create_flags: ExCreateQP.CreateFlags and
// UVERBS_ATTR_CREATE_QP_FLAGS.
const (
	IB_UVERBS_QP_CREATE_BLOCK_MULTICAST_LOOPBACK = 1 << 1
	IB_UVERBS_QP_CREATE_SCATTER_FCS              = 1 << 8
	IB_UVERBS_QP_CREATE_CVLAN_STRIPPING          = 1 << 9
	IB_UVERBS_QP_CREATE_PCI_WRITE_END_PADDING    = 1 << 11
	IB_UVERBS_QP_CREATE_SQ_SIG_ALL               = 1 << 12
)

// enum ib_uverbs_query_port_cap_flags: QueryPortResp.PortCapFlags.
const (
	IB_UVERBS_PCF_SM                              = 1 << 1
	IB_UVERBS_PCF_NOTICE_SUP                      = 1 << 2
	IB_UVERBS_PCF_TRAP_SUP                        = 1 << 3
	IB_UVERBS_PCF_OPT_IPD_SUP                     = 1 << 4
	IB_UVERBS_PCF_AUTO_MIGR_SUP                   = 1 << 5
	IB_UVERBS_PCF_SL_MAP_SUP                      = 1 << 6
	IB_UVERBS_PCF_MKEY_NVRAM                      = 1 << 7
	IB_UVERBS_PCF_PKEY_NVRAM                      = 1 << 8
	IB_UVERBS_PCF_LED_INFO_SUP                    = 1 << 9
	IB_UVERBS_PCF_SM_DISABLED                     = 1 << 10
	IB_UVERBS_PCF_SYS_IMAGE_GUID_SUP              = 1 << 11
	IB_UVERBS_PCF_PKEY_SW_EXT_PORT_TRAP_SUP       = 1 << 12
	IB_UVERBS_PCF_EXTENDED_SPEEDS_SUP             = 1 << 14
	IB_UVERBS_PCF_CM_SUP                          = 1 << 16
	IB_UVERBS_PCF_SNMP_TUNNEL_SUP                 = 1 << 17
	IB_UVERBS_PCF_REINIT_SUP                      = 1 << 18
	IB_UVERBS_PCF_DEVICE_MGMT_SUP                 = 1 << 19
	IB_UVERBS_PCF_VENDOR_CLASS_SUP                = 1 << 20
	IB_UVERBS_PCF_DR_NOTICE_SUP                   = 1 << 21
	IB_UVERBS_PCF_CAP_MASK_NOTICE_SUP             = 1 << 22
	IB_UVERBS_PCF_BOOT_MGMT_SUP                   = 1 << 23
	IB_UVERBS_PCF_LINK_LATENCY_SUP                = 1 << 24
	IB_UVERBS_PCF_CLIENT_REG_SUP                  = 1 << 25
	IB_UVERBS_PCF_LINK_SPEED_WIDTH_TABLE_SUP      = 1 << 27
	IB_UVERBS_PCF_VENDOR_SPECIFIC_MADS_TABLE_SUP  = 1 << 28
	IB_UVERBS_PCF_MCAST_PKEY_TRAP_SUPPRESSION_SUP = 1 << 29
	IB_UVERBS_PCF_MCAST_FDB_TOP_SUP               = 1 << 30
	IB_UVERBS_PCF_HIERARCHY_INFO_SUP              = 1 << 31
	IB_UVERBS_PCF_IP_BASED_GIDS                   = 1 << 26 // a Linux flag, not an IBA one
)

// enum ib_uverbs_query_port_flags: QueryPortResp.Flags.
const IB_UVERBS_QPF_GRH_REQUIRED = 1 << 0

// enum ib_uverbs_read_counters_flags: UVERBS_ATTR_READ_COUNTERS_FLAGS.
const IB_UVERBS_READ_COUNTERS_PREFER_CACHED = 1 << 0

// enum ib_uverbs_advise_mr_advice: UVERBS_ATTR_ADVISE_MR_ADVICE.
const (
	IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH          = 0
	IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE    = 1
	IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT = 2
)

// enum ib_uverbs_advise_mr_flag: UVERBS_ATTR_ADVISE_MR_FLAGS.
const IB_UVERBS_ADVISE_MR_FLAG_FLUSH = 1 << 0

// enum ib_uverbs_gid_type: GIDEntry.GIDType.
const (
	IB_UVERBS_GID_TYPE_IB      = 0
	IB_UVERBS_GID_TYPE_ROCE_V1 = 1
	IB_UVERBS_GID_TYPE_ROCE_V2 = 2
)

// QueryPortRespEx is the UVERBS_ATTR_QUERY_PORT_RESP of
// UVERBS_METHOD_QUERY_PORT: the legacy response and the second capability
// word.
//
// struct ib_uverbs_query_port_resp_ex
type QueryPortRespEx struct {
	LegacyResp    QueryPortResp
	PortCapFlags2 uint16
	Reserved      [6]uint8
}

// QPCap is UVERBS_ATTR_CREATE_QP_CAP and UVERBS_ATTR_CREATE_QP_RESP_CAP.
//
// struct ib_uverbs_qp_cap
type QPCap struct {
	MaxSendWr     uint32
	MaxRecvWr     uint32
	MaxSendSGE    uint32
	MaxRecvSGE    uint32
	MaxInlineData uint32
}

// GIDEntry is one entry of the GID table, as UVERBS_METHOD_QUERY_GID_ENTRY
// and UVERBS_METHOD_QUERY_GID_TABLE return it. The C gid is declared as
// __aligned_u64 gid[2] but holds the 16 GID bytes in network order, so it is
// a byte array here; size and offsets are the same (only the Go alignment of
// the struct is 4 instead of 8, which matters to no copy).
//
// struct ib_uverbs_gid_entry
type GIDEntry struct {
	GID           [16]uint8
	GIDIndex      uint32
	PortNum       uint32
	GIDType       uint32 // IB_UVERBS_GID_TYPE_*
	NetdevIfindex uint32 // 0 if no netdev is associated
}

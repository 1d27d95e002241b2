// Structs and constants from include/uapi/rdma/ib_user_verbs.h (Linux 6.1;
// identical to rdma-core v43's kernel-headers/rdma/ib_user_verbs.h), plus the
// values of a few enums of the kernel-internal include/rdma/ib_verbs.h that
// cross the ABI unchanged (see the end of this file).
//
// These are the bodies of the legacy write() commands on
// /dev/infiniband/uverbsN, which the ioctl path also carries through
// UVERBS_METHOD_INVOKE_WRITE. Struct names are the C names without the
// ib_uverbs_ prefix, in CamelCase; constant names are the C names. C fields
// named reserved keep their name (the kernel wants them zero); padding the C
// compiler inserts on its own is spelled out as blank (_) fields, so that the
// Go layout equals the C layout on amd64 and arm64. Flexible array members
// (driver_data[], wc[], send_wr[], ...) have no Go field: the driver data or
// the array follows the struct in the same buffer. The sizes and offsets are
// checked against the C compiler in ib_user_verbs_test.go.

package abi

// IB_USER_VERBS_ABI_VERSION is the uverbs ABI version, as
// /sys/class/infiniband_verbs/abi_version reports it.
const IB_USER_VERBS_ABI_VERSION = 6

// IB_USER_VERBS_CMD_THRESHOLD is the first command number of the
// extended-only commands.
const IB_USER_VERBS_CMD_THRESHOLD = 50

// enum ib_uverbs_write_cmds: the command numbers of the write() interface,
// in ib_uverbs_cmd_hdr.command.
const (
	IB_USER_VERBS_CMD_GET_CONTEXT         = 0
	IB_USER_VERBS_CMD_QUERY_DEVICE        = 1
	IB_USER_VERBS_CMD_QUERY_PORT          = 2
	IB_USER_VERBS_CMD_ALLOC_PD            = 3
	IB_USER_VERBS_CMD_DEALLOC_PD          = 4
	IB_USER_VERBS_CMD_CREATE_AH           = 5
	IB_USER_VERBS_CMD_MODIFY_AH           = 6
	IB_USER_VERBS_CMD_QUERY_AH            = 7
	IB_USER_VERBS_CMD_DESTROY_AH          = 8
	IB_USER_VERBS_CMD_REG_MR              = 9
	IB_USER_VERBS_CMD_REG_SMR             = 10
	IB_USER_VERBS_CMD_REREG_MR            = 11
	IB_USER_VERBS_CMD_QUERY_MR            = 12
	IB_USER_VERBS_CMD_DEREG_MR            = 13
	IB_USER_VERBS_CMD_ALLOC_MW            = 14
	IB_USER_VERBS_CMD_BIND_MW             = 15
	IB_USER_VERBS_CMD_DEALLOC_MW          = 16
	IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL = 17
	IB_USER_VERBS_CMD_CREATE_CQ           = 18
	IB_USER_VERBS_CMD_RESIZE_CQ           = 19
	IB_USER_VERBS_CMD_DESTROY_CQ          = 20
	IB_USER_VERBS_CMD_POLL_CQ             = 21
	IB_USER_VERBS_CMD_PEEK_CQ             = 22
	IB_USER_VERBS_CMD_REQ_NOTIFY_CQ       = 23
	IB_USER_VERBS_CMD_CREATE_QP           = 24
	IB_USER_VERBS_CMD_QUERY_QP            = 25
	IB_USER_VERBS_CMD_MODIFY_QP           = 26
	IB_USER_VERBS_CMD_DESTROY_QP          = 27
	IB_USER_VERBS_CMD_POST_SEND           = 28
	IB_USER_VERBS_CMD_POST_RECV           = 29
	IB_USER_VERBS_CMD_ATTACH_MCAST        = 30
	IB_USER_VERBS_CMD_DETACH_MCAST        = 31
	IB_USER_VERBS_CMD_CREATE_SRQ          = 32
	IB_USER_VERBS_CMD_MODIFY_SRQ          = 33
	IB_USER_VERBS_CMD_QUERY_SRQ           = 34
	IB_USER_VERBS_CMD_DESTROY_SRQ         = 35
	IB_USER_VERBS_CMD_POST_SRQ_RECV       = 36
	IB_USER_VERBS_CMD_OPEN_XRCD           = 37
	IB_USER_VERBS_CMD_CLOSE_XRCD          = 38
	IB_USER_VERBS_CMD_CREATE_XSRQ         = 39
	IB_USER_VERBS_CMD_OPEN_QP             = 40
)

// The extended command numbers. They are sent with
// IB_USER_VERBS_CMD_FLAG_EXTENDED set and an ib_uverbs_ex_cmd_hdr after the
// ib_uverbs_cmd_hdr.
const (
	IB_USER_VERBS_EX_CMD_QUERY_DEVICE        = IB_USER_VERBS_CMD_QUERY_DEVICE
	IB_USER_VERBS_EX_CMD_CREATE_CQ           = IB_USER_VERBS_CMD_CREATE_CQ
	IB_USER_VERBS_EX_CMD_CREATE_QP           = IB_USER_VERBS_CMD_CREATE_QP
	IB_USER_VERBS_EX_CMD_MODIFY_QP           = IB_USER_VERBS_CMD_MODIFY_QP
	IB_USER_VERBS_EX_CMD_CREATE_FLOW         = IB_USER_VERBS_CMD_THRESHOLD
	IB_USER_VERBS_EX_CMD_DESTROY_FLOW        = 51
	IB_USER_VERBS_EX_CMD_CREATE_WQ           = 52
	IB_USER_VERBS_EX_CMD_MODIFY_WQ           = 53
	IB_USER_VERBS_EX_CMD_DESTROY_WQ          = 54
	IB_USER_VERBS_EX_CMD_CREATE_RWQ_IND_TBL  = 55
	IB_USER_VERBS_EX_CMD_DESTROY_RWQ_IND_TBL = 56
	IB_USER_VERBS_EX_CMD_MODIFY_CQ           = 57
)

// Fields of ib_uverbs_cmd_hdr.command.
const (
	IB_USER_VERBS_CMD_COMMAND_MASK  = 0xff       // the command number bits
	IB_USER_VERBS_CMD_FLAG_EXTENDED = 0x80000000 // marks an extended command
)

// IB_USER_VERBS_MAX_LOG_IND_TBL_SIZE is the largest log_ind_tbl_size of an
// RWQ indirection table.
const IB_USER_VERBS_MAX_LOG_IND_TBL_SIZE = 0x0d

// IB_DEVICE_NAME_MAX is the size of a device name buffer, NUL included.
const IB_DEVICE_NAME_MAX = 64

// enum ib_uverbs_create_qp_mask: ib_uverbs_ex_create_qp.comp_mask.
const (
	IB_UVERBS_CREATE_QP_MASK_IND_TABLE = 1 << 0 // rwq_ind_tbl_handle is valid
	IB_UVERBS_CREATE_QP_SUP_COMP_MASK  = IB_UVERBS_CREATE_QP_MASK_IND_TABLE
)

// enum ib_uverbs_ex_create_cq_flags: ib_uverbs_ex_create_cq.flags.
const (
	IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION = 1 << 0
	IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN       = 1 << 1
)

// enum ib_uverbs_wc_opcode: the send-side opcodes of ib_uverbs_wc.opcode.
// Receive completions use IB_WC_RECV and IB_WC_RECV_RDMA_WITH_IMM (below).
const (
	IB_UVERBS_WC_SEND       = 0
	IB_UVERBS_WC_RDMA_WRITE = 1
	IB_UVERBS_WC_RDMA_READ  = 2
	IB_UVERBS_WC_COMP_SWAP  = 3
	IB_UVERBS_WC_FETCH_ADD  = 4
	IB_UVERBS_WC_BIND_MW    = 5
	IB_UVERBS_WC_LOCAL_INV  = 6
	IB_UVERBS_WC_TSO        = 7
	// Since Linux 6.2 (rxe's RDMA FLUSH and ATOMIC WRITE).
	IB_UVERBS_WC_FLUSH        = 8
	IB_UVERBS_WC_ATOMIC_WRITE = 9
)

// enum ib_uverbs_wr_opcode: ib_uverbs_send_wr.opcode, and the opcode of the
// rxe send WQE. 14 and 15 (FLUSH, ATOMIC_WRITE) came in Linux 6.2.
const (
	IB_UVERBS_WR_RDMA_WRITE                  = 0
	IB_UVERBS_WR_RDMA_WRITE_WITH_IMM         = 1
	IB_UVERBS_WR_SEND                        = 2
	IB_UVERBS_WR_SEND_WITH_IMM               = 3
	IB_UVERBS_WR_RDMA_READ                   = 4
	IB_UVERBS_WR_ATOMIC_CMP_AND_SWP          = 5
	IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD        = 6
	IB_UVERBS_WR_LOCAL_INV                   = 7
	IB_UVERBS_WR_BIND_MW                     = 8
	IB_UVERBS_WR_SEND_WITH_INV               = 9
	IB_UVERBS_WR_TSO                         = 10
	IB_UVERBS_WR_RDMA_READ_WITH_INV          = 11
	IB_UVERBS_WR_MASKED_ATOMIC_CMP_AND_SWP   = 12
	IB_UVERBS_WR_MASKED_ATOMIC_FETCH_AND_ADD = 13
	IB_UVERBS_WR_FLUSH                       = 14
	IB_UVERBS_WR_ATOMIC_WRITE                = 15
)

// enum ib_placement_type (IBA A19.4.1.1): the type of an RDMA FLUSH, the
// type member of RxeSendWrFlush. Since Linux 6.2.
const (
	IB_FLUSH_GLOBAL     = 1 << 0
	IB_FLUSH_PERSISTENT = 1 << 1
)

// enum ib_selectivity_level (IBA A19.4.1.2): what an RDMA FLUSH covers,
// the level member of RxeSendWrFlush. Since Linux 6.2.
const (
	IB_FLUSH_RANGE = 0
	IB_FLUSH_MR    = 1
)

// enum ib_uverbs_device_cap_flags: ib_uverbs_query_device_resp.device_cap_flags
// (low 32 bits) and ib_uverbs_ex_query_device_resp.device_cap_flags_ex.
const (
	IB_UVERBS_DEVICE_RESIZE_MAX_WR         = 1 << 0
	IB_UVERBS_DEVICE_BAD_PKEY_CNTR         = 1 << 1
	IB_UVERBS_DEVICE_BAD_QKEY_CNTR         = 1 << 2
	IB_UVERBS_DEVICE_RAW_MULTI             = 1 << 3
	IB_UVERBS_DEVICE_AUTO_PATH_MIG         = 1 << 4
	IB_UVERBS_DEVICE_CHANGE_PHY_PORT       = 1 << 5
	IB_UVERBS_DEVICE_UD_AV_PORT_ENFORCE    = 1 << 6
	IB_UVERBS_DEVICE_CURR_QP_STATE_MOD     = 1 << 7
	IB_UVERBS_DEVICE_SHUTDOWN_PORT         = 1 << 8
	IB_UVERBS_DEVICE_PORT_ACTIVE_EVENT     = 1 << 10
	IB_UVERBS_DEVICE_SYS_IMAGE_GUID        = 1 << 11
	IB_UVERBS_DEVICE_RC_RNR_NAK_GEN        = 1 << 12
	IB_UVERBS_DEVICE_SRQ_RESIZE            = 1 << 13
	IB_UVERBS_DEVICE_N_NOTIFY_CQ           = 1 << 14
	IB_UVERBS_DEVICE_MEM_WINDOW            = 1 << 17
	IB_UVERBS_DEVICE_UD_IP_CSUM            = 1 << 18
	IB_UVERBS_DEVICE_XRC                   = 1 << 20
	IB_UVERBS_DEVICE_MEM_MGT_EXTENSIONS    = 1 << 21
	IB_UVERBS_DEVICE_MEM_WINDOW_TYPE_2A    = 1 << 23
	IB_UVERBS_DEVICE_MEM_WINDOW_TYPE_2B    = 1 << 24
	IB_UVERBS_DEVICE_RC_IP_CSUM            = 1 << 25
	IB_UVERBS_DEVICE_RAW_IP_CSUM           = 1 << 26 // deprecated: IB_UVERBS_RAW_PACKET_CAP_IP_CSUM
	IB_UVERBS_DEVICE_MANAGED_FLOW_STEERING = 1 << 29
	IB_UVERBS_DEVICE_RAW_SCATTER_FCS       = 1 << 34 // deprecated: IB_UVERBS_RAW_PACKET_CAP_SCATTER_FCS
	IB_UVERBS_DEVICE_PCI_WRITE_END_PADDING = 1 << 36
	// Since Linux 6.2: RDMA FLUSH placement types, and ATOMIC WRITE.
	IB_UVERBS_DEVICE_FLUSH_GLOBAL     = 1 << 38
	IB_UVERBS_DEVICE_FLUSH_PERSISTENT = 1 << 39
	IB_UVERBS_DEVICE_ATOMIC_WRITE     = 1 << 40
)

// enum ib_uverbs_raw_packet_caps: ib_uverbs_ex_query_device_resp.raw_packet_caps.
const (
	IB_UVERBS_RAW_PACKET_CAP_CVLAN_STRIPPING = 1 << 0
	IB_UVERBS_RAW_PACKET_CAP_SCATTER_FCS     = 1 << 1
	IB_UVERBS_RAW_PACKET_CAP_IP_CSUM         = 1 << 2
	IB_UVERBS_RAW_PACKET_CAP_DELAY_DROP      = 1 << 3
)

// AsyncEventDesc is what a read() of the async event fd returns.
//
// struct ib_uverbs_async_event_desc
type AsyncEventDesc struct {
	Element   uint64 // user_handle of the CQ, QP, SRQ or WQ; the port number for port events
	EventType uint32 // enum ib_event_type (IB_EVENT_*)
	Reserved  uint32
}

// CompEventDesc is what a read() of a completion channel fd returns.
//
// struct ib_uverbs_comp_event_desc
type CompEventDesc struct {
	CQHandle uint64 // the user_handle given at CQ creation
}

// CQModerationCaps is part of ExQueryDeviceResp.
//
// struct ib_uverbs_cq_moderation_caps
type CQModerationCaps struct {
	MaxCQModerationCount  uint16
	MaxCQModerationPeriod uint16
	Reserved              uint32
}

// CmdHdr starts every write() command. For a legacy command in_words is the
// length of the whole write (this header included) and out_words the length
// of the response buffer, both in 4-byte words. For an extended command
// (command | IB_USER_VERBS_CMD_FLAG_EXTENDED) they count 8-byte words of the
// core request and response only, and an ExCmdHdr follows.
//
// struct ib_uverbs_cmd_hdr
type CmdHdr struct {
	Command  uint32
	InWords  uint16
	OutWords uint16
}

// ExCmdHdr follows CmdHdr in an extended command.
//
// struct ib_uverbs_ex_cmd_hdr
type ExCmdHdr struct {
	Response         uint64 // user pointer to the response buffer
	ProviderInWords  uint16 // driver input, in 8-byte words
	ProviderOutWords uint16 // driver output, in 8-byte words
	CmdHdrReserved   uint32
}

// GetContext is the body of IB_USER_VERBS_CMD_GET_CONTEXT; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_get_context
type GetContext struct {
	Response uint64
}

// GetContextResp is the response of IB_USER_VERBS_CMD_GET_CONTEXT; driver
// data (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_get_context_resp
type GetContextResp struct {
	AsyncFD        uint32
	NumCompVectors uint32
}

// QueryDevice is the body of IB_USER_VERBS_CMD_QUERY_DEVICE; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_query_device
type QueryDevice struct {
	Response uint64
}

// QueryDeviceResp is the response of IB_USER_VERBS_CMD_QUERY_DEVICE.
//
// struct ib_uverbs_query_device_resp
type QueryDeviceResp struct {
	FwVer                 uint64
	NodeGUID              uint64 // __be64
	SysImageGUID          uint64 // __be64
	MaxMRSize             uint64
	PageSizeCap           uint64
	VendorID              uint32
	VendorPartID          uint32
	HwVer                 uint32
	MaxQP                 uint32
	MaxQPWr               uint32
	DeviceCapFlags        uint32 // IB_UVERBS_DEVICE_* (low 32 bits)
	MaxSGE                uint32
	MaxSGERd              uint32
	MaxCQ                 uint32
	MaxCQE                uint32
	MaxMR                 uint32
	MaxPD                 uint32
	MaxQPRdAtom           uint32
	MaxEERdAtom           uint32
	MaxResRdAtom          uint32
	MaxQPInitRdAtom       uint32
	MaxEEInitRdAtom       uint32
	AtomicCap             uint32 // IB_ATOMIC_*
	MaxEE                 uint32
	MaxRDD                uint32
	MaxMW                 uint32
	MaxRawIPv6QP          uint32
	MaxRawEthyQP          uint32
	MaxMcastGrp           uint32
	MaxMcastQPAttach      uint32
	MaxTotalMcastQPAttach uint32
	MaxAH                 uint32
	MaxFMR                uint32
	MaxMapPerFMR          uint32
	MaxSRQ                uint32
	MaxSRQWr              uint32
	MaxSRQSGE             uint32
	MaxPKeys              uint16
	LocalCAAckDelay       uint8
	PhysPortCnt           uint8
	Reserved              [4]uint8
}

// ExQueryDevice is the core request of IB_USER_VERBS_EX_CMD_QUERY_DEVICE.
//
// struct ib_uverbs_ex_query_device
type ExQueryDevice struct {
	CompMask uint32
	Reserved uint32
}

// ODPCaps is part of ExQueryDeviceResp. The three per-transport words are
// the C member struct per_transport_caps, flattened.
//
// struct ib_uverbs_odp_caps
type ODPCaps struct {
	GeneralCaps uint64 // IB_ODP_SUPPORT*
	RCODPCaps   uint32 // per_transport_caps.rc_odp_caps: IB_ODP_SUPPORT_{SEND,...}
	UCODPCaps   uint32 // per_transport_caps.uc_odp_caps
	UDODPCaps   uint32 // per_transport_caps.ud_odp_caps
	Reserved    uint32
}

// RSSCaps is part of ExQueryDeviceResp.
//
// struct ib_uverbs_rss_caps
type RSSCaps struct {
	SupportedQPTs              uint32 // bit (1 << IB_QPT_x) per supported QP type
	MaxRWQIndirectionTables    uint32
	MaxRWQIndirectionTableSize uint32
	Reserved                   uint32
}

// TMCaps (tag matching) is part of ExQueryDeviceResp.
//
// struct ib_uverbs_tm_caps
type TMCaps struct {
	MaxRndvHdrSize uint32
	MaxNumTags     uint32
	Flags          uint32
	MaxOps         uint32
	MaxSGE         uint32
	Reserved       uint32
}

// ExQueryDeviceResp is the response of IB_USER_VERBS_EX_CMD_QUERY_DEVICE.
// The kernel writes at most out_words*8 bytes and reports how many in
// ResponseLength; older kernels stop earlier.
//
// struct ib_uverbs_ex_query_device_resp
type ExQueryDeviceResp struct {
	Base             QueryDeviceResp
	CompMask         uint32
	ResponseLength   uint32
	ODPCaps          ODPCaps
	TimestampMask    uint64
	HCACoreClock     uint64 // kHz
	DeviceCapFlagsEx uint64 // IB_UVERBS_DEVICE_*
	RSSCaps          RSSCaps
	MaxWQTypeRQ      uint32
	RawPacketCaps    uint32 // IB_UVERBS_RAW_PACKET_CAP_*
	TMCaps           TMCaps
	CQModerationCaps CQModerationCaps
	MaxDMSize        uint64
	XRCODPCaps       uint32
	Reserved         uint32
}

// QueryPort is the body of IB_USER_VERBS_CMD_QUERY_PORT; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_query_port
type QueryPort struct {
	Response uint64
	PortNum  uint8
	Reserved [7]uint8
}

// QueryPortResp is the response of IB_USER_VERBS_CMD_QUERY_PORT, and the
// first part of QueryPortRespEx.
//
// struct ib_uverbs_query_port_resp
type QueryPortResp struct {
	PortCapFlags  uint32 // IB_UVERBS_PCF_*
	MaxMsgSz      uint32
	BadPKeyCntr   uint32
	QKeyViolCntr  uint32
	GIDTblLen     uint32
	PKeyTblLen    uint16
	LID           uint16
	SMLID         uint16
	State         uint8 // IB_PORT_*
	MaxMTU        uint8 // IB_MTU_*
	ActiveMTU     uint8 // IB_MTU_*
	LMC           uint8
	MaxVLNum      uint8
	SMSL          uint8
	SubnetTimeout uint8
	InitTypeReply uint8
	ActiveWidth   uint8 // IB_WIDTH_*
	ActiveSpeed   uint8 // IB_SPEED_*
	PhysState     uint8 // IB_PORT_PHYS_STATE_*
	LinkLayer     uint8 // IB_LINK_LAYER_*
	Flags         uint8 // IB_UVERBS_QPF_*
	Reserved      uint8
}

// AllocPD is the body of IB_USER_VERBS_CMD_ALLOC_PD; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_alloc_pd
type AllocPD struct {
	Response uint64
}

// AllocPDResp is the response of IB_USER_VERBS_CMD_ALLOC_PD; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_alloc_pd_resp
type AllocPDResp struct {
	PDHandle uint32
}

// DeallocPD is the body of IB_USER_VERBS_CMD_DEALLOC_PD.
//
// struct ib_uverbs_dealloc_pd
type DeallocPD struct {
	PDHandle uint32
}

// OpenXRCD is the body of IB_USER_VERBS_CMD_OPEN_XRCD; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_open_xrcd
type OpenXRCD struct {
	Response uint64
	FD       uint32
	OFlags   uint32
}

// OpenXRCDResp is the response of IB_USER_VERBS_CMD_OPEN_XRCD; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_open_xrcd_resp
type OpenXRCDResp struct {
	XRCDHandle uint32
}

// CloseXRCD is the body of IB_USER_VERBS_CMD_CLOSE_XRCD.
//
// struct ib_uverbs_close_xrcd
type CloseXRCD struct {
	XRCDHandle uint32
}

// RegMR is the body of IB_USER_VERBS_CMD_REG_MR; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_reg_mr
type RegMR struct {
	Response    uint64
	Start       uint64 // user address of the memory
	Length      uint64
	HCAVA       uint64 // the address the HCA sees (iova)
	PDHandle    uint32
	AccessFlags uint32 // IB_UVERBS_ACCESS_*
}

// RegMRResp is the response of IB_USER_VERBS_CMD_REG_MR; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_reg_mr_resp
type RegMRResp struct {
	MRHandle uint32
	LKey     uint32
	RKey     uint32
}

// ReregMR is the body of IB_USER_VERBS_CMD_REREG_MR; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_rereg_mr
type ReregMR struct {
	Response    uint64
	MRHandle    uint32
	Flags       uint32 // IB_MR_REREG_*
	Start       uint64
	Length      uint64
	HCAVA       uint64
	PDHandle    uint32
	AccessFlags uint32
}

// ReregMRResp is the response of IB_USER_VERBS_CMD_REREG_MR; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_rereg_mr_resp
type ReregMRResp struct {
	LKey uint32
	RKey uint32
}

// DeregMR is the body of IB_USER_VERBS_CMD_DEREG_MR.
//
// struct ib_uverbs_dereg_mr
type DeregMR struct {
	MRHandle uint32
}

// AllocMW is the body of IB_USER_VERBS_CMD_ALLOC_MW; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_alloc_mw
type AllocMW struct {
	Response uint64
	PDHandle uint32
	MWType   uint8 // IB_MW_TYPE_*
	Reserved [3]uint8
}

// AllocMWResp is the response of IB_USER_VERBS_CMD_ALLOC_MW; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_alloc_mw_resp
type AllocMWResp struct {
	MWHandle uint32
	RKey     uint32
}

// DeallocMW is the body of IB_USER_VERBS_CMD_DEALLOC_MW.
//
// struct ib_uverbs_dealloc_mw
type DeallocMW struct {
	MWHandle uint32
}

// CreateCompChannel is the body of IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL.
//
// struct ib_uverbs_create_comp_channel
type CreateCompChannel struct {
	Response uint64
}

// CreateCompChannelResp is the response of
// IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL.
//
// struct ib_uverbs_create_comp_channel_resp
type CreateCompChannelResp struct {
	FD uint32
}

// CreateCQ is the body of IB_USER_VERBS_CMD_CREATE_CQ; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_create_cq
type CreateCQ struct {
	Response    uint64
	UserHandle  uint64
	CQE         uint32
	CompVector  uint32
	CompChannel int32 // completion channel fd, or -1 for none
	Reserved    uint32
}

// ExCreateCQ is the core request of IB_USER_VERBS_EX_CMD_CREATE_CQ.
//
// struct ib_uverbs_ex_create_cq
type ExCreateCQ struct {
	UserHandle  uint64
	CQE         uint32
	CompVector  uint32
	CompChannel int32
	CompMask    uint32
	Flags       uint32 // IB_UVERBS_CQ_FLAGS_*
	Reserved    uint32
}

// CreateCQResp is the response of IB_USER_VERBS_CMD_CREATE_CQ; driver data
// (driver_data[0], not a Go field) follows it.
//
// struct ib_uverbs_create_cq_resp
type CreateCQResp struct {
	CQHandle uint32
	CQE      uint32
}

// ExCreateCQResp is the core response of IB_USER_VERBS_EX_CMD_CREATE_CQ.
//
// struct ib_uverbs_ex_create_cq_resp
type ExCreateCQResp struct {
	Base           CreateCQResp
	CompMask       uint32
	ResponseLength uint32
}

// ResizeCQ is the body of IB_USER_VERBS_CMD_RESIZE_CQ; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_resize_cq
type ResizeCQ struct {
	Response uint64
	CQHandle uint32
	CQE      uint32
}

// ResizeCQResp is the response of IB_USER_VERBS_CMD_RESIZE_CQ; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_resize_cq_resp
type ResizeCQResp struct {
	CQE      uint32
	Reserved uint32
}

// PollCQ is the body of IB_USER_VERBS_CMD_POLL_CQ. Software providers (rxe,
// siw) poll a mapped ring instead.
//
// struct ib_uverbs_poll_cq
type PollCQ struct {
	Response uint64
	CQHandle uint32
	NE       uint32 // number of entries the response can hold
}

// WC is a work completion, as POLL_CQ returns it and as the rxe CQ ring
// holds it.
//
// struct ib_uverbs_wc
type WC struct {
	WrID         uint64
	Status       uint32 // enum ib_wc_status (IB_WC_SUCCESS, ...)
	Opcode       uint32 // IB_UVERBS_WC_*, IB_WC_RECV, IB_WC_RECV_RDMA_WITH_IMM
	VendorErr    uint32
	ByteLen      uint32
	Ex           uint32 // union ex: imm_data (__be32) or invalidate_rkey
	QPNum        uint32
	SrcQP        uint32
	WCFlags      uint32 // IB_WC_GRH, IB_WC_WITH_IMM, ...
	PKeyIndex    uint16
	SLID         uint16
	SL           uint8
	DLIDPathBits uint8
	PortNum      uint8
	Reserved     uint8
}

// PollCQResp is the response of IB_USER_VERBS_CMD_POLL_CQ; Count WC
// structs (wc[], not a Go field) follow it.
//
// struct ib_uverbs_poll_cq_resp
type PollCQResp struct {
	Count    uint32
	Reserved uint32
}

// ReqNotifyCQ is the body of IB_USER_VERBS_CMD_REQ_NOTIFY_CQ (no response).
//
// struct ib_uverbs_req_notify_cq
type ReqNotifyCQ struct {
	CQHandle      uint32
	SolicitedOnly uint32 // 1: only solicited completions raise an event
}

// DestroyCQ is the body of IB_USER_VERBS_CMD_DESTROY_CQ.
//
// struct ib_uverbs_destroy_cq
type DestroyCQ struct {
	Response uint64
	CQHandle uint32
	Reserved uint32
}

// DestroyCQResp is the response of IB_USER_VERBS_CMD_DESTROY_CQ.
//
// struct ib_uverbs_destroy_cq_resp
type DestroyCQResp struct {
	CompEventsReported  uint32
	AsyncEventsReported uint32
}

// GlobalRoute is the GRH part of AHAttr.
//
// struct ib_uverbs_global_route
type GlobalRoute struct {
	DGID         [16]uint8
	FlowLabel    uint32
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
	Reserved     uint8
}

// AHAttr is an address vector, in CreateAH and QPAttr.
//
// struct ib_uverbs_ah_attr
type AHAttr struct {
	GRH         GlobalRoute
	DLID        uint16
	SL          uint8
	SrcPathBits uint8
	StaticRate  uint8
	IsGlobal    uint8
	PortNum     uint8
	Reserved    uint8
}

// QPAttr is the QP attribute block of the rdma_cm INIT_QP_ATTR response.
//
// struct ib_uverbs_qp_attr
type QPAttr struct {
	QPAttrMask       uint32 // IB_QP_*
	QPState          uint32 // IB_QPS_*
	CurQPState       uint32
	PathMTU          uint32 // IB_MTU_*
	PathMigState     uint32 // IB_MIG_*
	QKey             uint32
	RQPSN            uint32
	SQPSN            uint32
	DestQPNum        uint32
	QPAccessFlags    uint32 // IB_UVERBS_ACCESS_*
	AHAttr           AHAttr
	AltAHAttr        AHAttr
	MaxSendWr        uint32 // the ib_qp_cap block starts here
	MaxRecvWr        uint32
	MaxSendSGE       uint32
	MaxRecvSGE       uint32
	MaxInlineData    uint32
	PKeyIndex        uint16
	AltPKeyIndex     uint16
	EnSQDAsyncNotify uint8
	SQDraining       uint8
	MaxRdAtomic      uint8
	MaxDestRdAtomic  uint8
	MinRNRTimer      uint8
	PortNum          uint8
	Timeout          uint8
	RetryCnt         uint8
	RNRRetry         uint8
	AltPortNum       uint8
	AltTimeout       uint8
	Reserved         [5]uint8
}

// CreateQP is the body of IB_USER_VERBS_CMD_CREATE_QP; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_create_qp
type CreateQP struct {
	Response      uint64
	UserHandle    uint64
	PDHandle      uint32
	SendCQHandle  uint32
	RecvCQHandle  uint32
	SRQHandle     uint32
	MaxSendWr     uint32
	MaxRecvWr     uint32
	MaxSendSGE    uint32
	MaxRecvSGE    uint32
	MaxInlineData uint32
	SQSigAll      uint8
	QPType        uint8 // IB_UVERBS_QPT_*
	IsSRQ         uint8
	Reserved      uint8
}

// ExCreateQP is the core request of IB_USER_VERBS_EX_CMD_CREATE_QP.
//
// struct ib_uverbs_ex_create_qp
type ExCreateQP struct {
	UserHandle      uint64
	PDHandle        uint32
	SendCQHandle    uint32
	RecvCQHandle    uint32
	SRQHandle       uint32
	MaxSendWr       uint32
	MaxRecvWr       uint32
	MaxSendSGE      uint32
	MaxRecvSGE      uint32
	MaxInlineData   uint32
	SQSigAll        uint8
	QPType          uint8
	IsSRQ           uint8
	Reserved        uint8
	CompMask        uint32 // IB_UVERBS_CREATE_QP_MASK_*
	CreateFlags     uint32 // IB_UVERBS_QP_CREATE_*
	RWQIndTblHandle uint32
	SourceQPN       uint32
}

// OpenQP is the body of IB_USER_VERBS_CMD_OPEN_QP (an XRC target QP); driver
// data (driver_data[], not a Go field) follows it. The response is a
// CreateQPResp.
//
// struct ib_uverbs_open_qp
type OpenQP struct {
	Response   uint64
	UserHandle uint64
	PDHandle   uint32
	QPN        uint32
	QPType     uint8
	Reserved   [7]uint8
}

// CreateQPResp is the response of IB_USER_VERBS_CMD_CREATE_QP and
// IB_USER_VERBS_CMD_OPEN_QP; driver data (driver_data[0], not a Go field)
// follows it.
//
// struct ib_uverbs_create_qp_resp
type CreateQPResp struct {
	QPHandle      uint32
	QPN           uint32
	MaxSendWr     uint32
	MaxRecvWr     uint32
	MaxSendSGE    uint32
	MaxRecvSGE    uint32
	MaxInlineData uint32
	Reserved      uint32
}

// ExCreateQPResp is the core response of IB_USER_VERBS_EX_CMD_CREATE_QP.
//
// struct ib_uverbs_ex_create_qp_resp
type ExCreateQPResp struct {
	Base           CreateQPResp
	CompMask       uint32
	ResponseLength uint32
}

// QPDest is a path (address vector) in QueryQPResp and ModifyQP.
//
// struct ib_uverbs_qp_dest
type QPDest struct {
	DGID         [16]uint8
	FlowLabel    uint32
	DLID         uint16
	Reserved     uint16
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
	SL           uint8
	SrcPathBits  uint8
	StaticRate   uint8
	IsGlobal     uint8
	PortNum      uint8
}

// QueryQP is the body of IB_USER_VERBS_CMD_QUERY_QP; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_query_qp
type QueryQP struct {
	Response uint64
	QPHandle uint32
	AttrMask uint32 // IB_QP_*
}

// QueryQPResp is the response of IB_USER_VERBS_CMD_QUERY_QP; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_query_qp_resp
type QueryQPResp struct {
	Dest            QPDest
	AltDest         QPDest
	MaxSendWr       uint32
	MaxRecvWr       uint32
	MaxSendSGE      uint32
	MaxRecvSGE      uint32
	MaxInlineData   uint32
	QKey            uint32
	RQPSN           uint32
	SQPSN           uint32
	DestQPNum       uint32
	QPAccessFlags   uint32
	PKeyIndex       uint16
	AltPKeyIndex    uint16
	QPState         uint8 // IB_QPS_*
	CurQPState      uint8
	PathMTU         uint8 // IB_MTU_*
	PathMigState    uint8
	SQDraining      uint8
	MaxRdAtomic     uint8
	MaxDestRdAtomic uint8
	MinRNRTimer     uint8
	PortNum         uint8
	Timeout         uint8
	RetryCnt        uint8
	RNRRetry        uint8
	AltPortNum      uint8
	AltTimeout      uint8
	SQSigAll        uint8
	Reserved        [5]uint8
}

// ModifyQP is the body of IB_USER_VERBS_CMD_MODIFY_QP (no response); driver
// data (driver_data[0], not a Go field) follows it. The legacy command
// rejects attr_mask bits outside IB_QP_ATTR_STANDARD_BITS.
//
// struct ib_uverbs_modify_qp
type ModifyQP struct {
	Dest             QPDest
	AltDest          QPDest
	QPHandle         uint32
	AttrMask         uint32 // IB_QP_*
	QKey             uint32
	RQPSN            uint32
	SQPSN            uint32
	DestQPNum        uint32
	QPAccessFlags    uint32
	PKeyIndex        uint16
	AltPKeyIndex     uint16
	QPState          uint8
	CurQPState       uint8
	PathMTU          uint8
	PathMigState     uint8
	EnSQDAsyncNotify uint8
	MaxRdAtomic      uint8
	MaxDestRdAtomic  uint8
	MinRNRTimer      uint8
	PortNum          uint8
	Timeout          uint8
	RetryCnt         uint8
	RNRRetry         uint8
	AltPortNum       uint8
	AltTimeout       uint8
	Reserved         [2]uint8
}

// ExModifyQP is the core request of IB_USER_VERBS_EX_CMD_MODIFY_QP, which
// also accepts IB_QP_RATE_LIMIT.
//
// struct ib_uverbs_ex_modify_qp
type ExModifyQP struct {
	Base      ModifyQP
	RateLimit uint32
	Reserved  uint32
}

// ExModifyQPResp is the core response of IB_USER_VERBS_EX_CMD_MODIFY_QP.
//
// struct ib_uverbs_ex_modify_qp_resp
type ExModifyQPResp struct {
	CompMask       uint32
	ResponseLength uint32
}

// DestroyQP is the body of IB_USER_VERBS_CMD_DESTROY_QP.
//
// struct ib_uverbs_destroy_qp
type DestroyQP struct {
	Response uint64
	QPHandle uint32
	Reserved uint32
}

// DestroyQPResp is the response of IB_USER_VERBS_CMD_DESTROY_QP.
//
// struct ib_uverbs_destroy_qp_resp
type DestroyQPResp struct {
	EventsReported uint32
}

// SGE is a scatter/gather element (the same layout as struct ib_sge and
// ibv_sge).
//
// struct ib_uverbs_sge
type SGE struct {
	Addr   uint64
	Length uint32
	LKey   uint32
}

// SendWr is one work request of IB_USER_VERBS_CMD_POST_SEND. Wr is the C
// union wr: its bytes are laid out as SendWrRDMA, SendWrAtomic or SendWrUD,
// depending on Opcode; all three start at the offset of Wr.
//
// struct ib_uverbs_send_wr
type SendWr struct {
	WrID      uint64
	NumSGE    uint32
	Opcode    uint32 // IB_UVERBS_WR_*
	SendFlags uint32 // IB_SEND_*
	Ex        uint32 // union ex: imm_data (__be32) or invalidate_rkey
	Wr        [32]byte
}

// SendWrRDMA is the rdma member of the union SendWr.Wr, for RDMA read and
// write opcodes.
//
// struct ib_uverbs_send_wr, member wr.rdma
type SendWrRDMA struct {
	RemoteAddr uint64
	RKey       uint32
	Reserved   uint32
}

// SendWrAtomic is the atomic member of the union SendWr.Wr, for the atomic
// opcodes.
//
// struct ib_uverbs_send_wr, member wr.atomic
type SendWrAtomic struct {
	RemoteAddr uint64
	CompareAdd uint64
	Swap       uint64
	RKey       uint32
	Reserved   uint32
}

// SendWrUD is the ud member of the union SendWr.Wr, for sends on UD QPs.
//
// struct ib_uverbs_send_wr, member wr.ud
type SendWrUD struct {
	AH         uint32 // AH handle
	RemoteQPN  uint32
	RemoteQKey uint32
	Reserved   uint32
}

// PostSend is the body of IB_USER_VERBS_CMD_POST_SEND. wr_count work
// requests of wqe_size bytes each (send_wr[], not a Go field), then sge_count
// SGEs, follow it. The kernel wants wqe_size >= the size of SendWr even when
// wr_count is 0.
//
// struct ib_uverbs_post_send
type PostSend struct {
	Response uint64
	QPHandle uint32
	WrCount  uint32
	SGECount uint32
	WqeSize  uint32
}

// PostSendResp is the response of IB_USER_VERBS_CMD_POST_SEND.
//
// struct ib_uverbs_post_send_resp
type PostSendResp struct {
	BadWr uint32 // index of the first failed work request
}

// RecvWr is one work request of POST_RECV and POST_SRQ_RECV.
//
// struct ib_uverbs_recv_wr
type RecvWr struct {
	WrID     uint64
	NumSGE   uint32
	Reserved uint32
}

// PostRecv is the body of IB_USER_VERBS_CMD_POST_RECV; wr_count RecvWr of
// wqe_size bytes each (recv_wr[], not a Go field), then sge_count SGEs,
// follow it.
//
// struct ib_uverbs_post_recv
type PostRecv struct {
	Response uint64
	QPHandle uint32
	WrCount  uint32
	SGECount uint32
	WqeSize  uint32
}

// PostRecvResp is the response of IB_USER_VERBS_CMD_POST_RECV.
//
// struct ib_uverbs_post_recv_resp
type PostRecvResp struct {
	BadWr uint32
}

// PostSRQRecv is the body of IB_USER_VERBS_CMD_POST_SRQ_RECV; wr_count
// RecvWr (recv[], not a Go field), then sge_count SGEs, follow it.
//
// struct ib_uverbs_post_srq_recv
type PostSRQRecv struct {
	Response  uint64
	SRQHandle uint32
	WrCount   uint32
	SGECount  uint32
	WqeSize   uint32
}

// PostSRQRecvResp is the response of IB_USER_VERBS_CMD_POST_SRQ_RECV.
//
// struct ib_uverbs_post_srq_recv_resp
type PostSRQRecvResp struct {
	BadWr uint32
}

// CreateAH is the body of IB_USER_VERBS_CMD_CREATE_AH; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_create_ah
type CreateAH struct {
	Response   uint64
	UserHandle uint64
	PDHandle   uint32
	Reserved   uint32
	Attr       AHAttr
}

// CreateAHResp is the response of IB_USER_VERBS_CMD_CREATE_AH; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_create_ah_resp
type CreateAHResp struct {
	AHHandle uint32
}

// DestroyAH is the body of IB_USER_VERBS_CMD_DESTROY_AH.
//
// struct ib_uverbs_destroy_ah
type DestroyAH struct {
	AHHandle uint32
}

// AttachMcast is the body of IB_USER_VERBS_CMD_ATTACH_MCAST (no response);
// driver data (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_attach_mcast
type AttachMcast struct {
	GID      [16]uint8
	QPHandle uint32
	MLID     uint16
	Reserved uint16
}

// DetachMcast is the body of IB_USER_VERBS_CMD_DETACH_MCAST (no response);
// driver data (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_detach_mcast
type DetachMcast struct {
	GID      [16]uint8
	QPHandle uint32
	MLID     uint16
	Reserved uint16
}

// CQModeration is the attribute of ExModifyCQ.
//
// struct ib_uverbs_cq_moderation
type CQModeration struct {
	CQCount  uint16
	CQPeriod uint16
}

// ExModifyCQ is the core request of IB_USER_VERBS_EX_CMD_MODIFY_CQ.
//
// struct ib_uverbs_ex_modify_cq
type ExModifyCQ struct {
	CQHandle uint32
	AttrMask uint32 // IB_CQ_MODERATE
	Attr     CQModeration
	Reserved uint32
}

// CreateSRQ is the body of IB_USER_VERBS_CMD_CREATE_SRQ; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_create_srq
type CreateSRQ struct {
	Response   uint64
	UserHandle uint64
	PDHandle   uint32
	MaxWr      uint32
	MaxSGE     uint32
	SRQLimit   uint32
}

// CreateXSRQ is the body of IB_USER_VERBS_CMD_CREATE_XSRQ; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_create_xsrq
type CreateXSRQ struct {
	Response   uint64
	UserHandle uint64
	SRQType    uint32 // IB_UVERBS_SRQT_*
	PDHandle   uint32
	MaxWr      uint32
	MaxSGE     uint32
	SRQLimit   uint32
	MaxNumTags uint32
	XRCDHandle uint32
	CQHandle   uint32
}

// CreateSRQResp is the response of IB_USER_VERBS_CMD_CREATE_SRQ and
// CREATE_XSRQ; driver data (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_create_srq_resp
type CreateSRQResp struct {
	SRQHandle uint32
	MaxWr     uint32
	MaxSGE    uint32
	SRQN      uint32
}

// ModifySRQ is the body of IB_USER_VERBS_CMD_MODIFY_SRQ (no response);
// driver data (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_modify_srq
type ModifySRQ struct {
	SRQHandle uint32
	AttrMask  uint32 // IB_SRQ_MAX_WR, IB_SRQ_LIMIT
	MaxWr     uint32
	SRQLimit  uint32
}

// QuerySRQ is the body of IB_USER_VERBS_CMD_QUERY_SRQ; driver data
// (driver_data[], not a Go field) follows it.
//
// struct ib_uverbs_query_srq
type QuerySRQ struct {
	Response  uint64
	SRQHandle uint32
	Reserved  uint32
}

// QuerySRQResp is the response of IB_USER_VERBS_CMD_QUERY_SRQ.
//
// struct ib_uverbs_query_srq_resp
type QuerySRQResp struct {
	MaxWr    uint32
	MaxSGE   uint32
	SRQLimit uint32
	Reserved uint32
}

// DestroySRQ is the body of IB_USER_VERBS_CMD_DESTROY_SRQ.
//
// struct ib_uverbs_destroy_srq
type DestroySRQ struct {
	Response  uint64
	SRQHandle uint32
	Reserved  uint32
}

// DestroySRQResp is the response of IB_USER_VERBS_CMD_DESTROY_SRQ.
//
// struct ib_uverbs_destroy_srq_resp
type DestroySRQResp struct {
	EventsReported uint32
}

// The rest of this file holds values of enums from include/rdma/ib_verbs.h.
// That header is kernel-internal and not installed, but these enums reach
// user space unchanged through the structs above (ib_uverbs_wc.status and
// opcode, ib_uverbs_async_event_desc.event_type, the attr_mask and state
// fields of the QP commands, ib_uverbs_query_port_resp, ...), and libibverbs
// defines the same numbers as IBV_*. They are the values of Linux 6.1.

// enum ib_wc_status: ib_uverbs_wc.status.
const (
	IB_WC_SUCCESS            = 0
	IB_WC_LOC_LEN_ERR        = 1
	IB_WC_LOC_QP_OP_ERR      = 2
	IB_WC_LOC_EEC_OP_ERR     = 3
	IB_WC_LOC_PROT_ERR       = 4
	IB_WC_WR_FLUSH_ERR       = 5
	IB_WC_MW_BIND_ERR        = 6
	IB_WC_BAD_RESP_ERR       = 7
	IB_WC_LOC_ACCESS_ERR     = 8
	IB_WC_REM_INV_REQ_ERR    = 9
	IB_WC_REM_ACCESS_ERR     = 10
	IB_WC_REM_OP_ERR         = 11
	IB_WC_RETRY_EXC_ERR      = 12
	IB_WC_RNR_RETRY_EXC_ERR  = 13
	IB_WC_LOC_RDD_VIOL_ERR   = 14
	IB_WC_REM_INV_RD_REQ_ERR = 15
	IB_WC_REM_ABORT_ERR      = 16
	IB_WC_INV_EECN_ERR       = 17
	IB_WC_INV_EEC_STATE_ERR  = 18
	IB_WC_FATAL_ERR          = 19
	IB_WC_RESP_TIMEOUT_ERR   = 20
	IB_WC_GENERAL_ERR        = 21
)

// enum ib_wc_opcode: ib_uverbs_wc.opcode. The first eight equal
// IB_UVERBS_WC_*; a receive completion has IB_WC_RECV set. REG_MR and the
// masked atomics have the values of Linux 6.2 and later, which the generated
// tables check (Linux 6.12): 6.2 put IB_WC_ATOMIC_WRITE (9) before them,
// which moved them from 8, 9 and 10 to 10, 11 and 12, and IB_WC_FLUSH (8)
// after them. Only kernel users post REG_MR and masked atomics, so user
// space never sees those values from the kernel.
const (
	IB_WC_SEND               = IB_UVERBS_WC_SEND
	IB_WC_RDMA_WRITE         = IB_UVERBS_WC_RDMA_WRITE
	IB_WC_RDMA_READ          = IB_UVERBS_WC_RDMA_READ
	IB_WC_COMP_SWAP          = IB_UVERBS_WC_COMP_SWAP
	IB_WC_FETCH_ADD          = IB_UVERBS_WC_FETCH_ADD
	IB_WC_BIND_MW            = IB_UVERBS_WC_BIND_MW
	IB_WC_LOCAL_INV          = IB_UVERBS_WC_LOCAL_INV
	IB_WC_LSO                = IB_UVERBS_WC_TSO
	IB_WC_FLUSH              = IB_UVERBS_WC_FLUSH        // since Linux 6.2
	IB_WC_ATOMIC_WRITE       = IB_UVERBS_WC_ATOMIC_WRITE // since Linux 6.2
	IB_WC_REG_MR             = 10                        // 8 before Linux 6.2
	IB_WC_MASKED_COMP_SWAP   = 11                        // 9 before Linux 6.2
	IB_WC_MASKED_FETCH_ADD   = 12                        // 10 before Linux 6.2
	IB_WC_RECV               = 1 << 7
	IB_WC_RECV_RDMA_WITH_IMM = 129
)

// enum ib_wc_flags: ib_uverbs_wc.wc_flags.
const (
	IB_WC_GRH                   = 1 << 0
	IB_WC_WITH_IMM              = 1 << 1
	IB_WC_WITH_INVALIDATE       = 1 << 2
	IB_WC_IP_CSUM_OK            = 1 << 3
	IB_WC_WITH_SMAC             = 1 << 4
	IB_WC_WITH_VLAN             = 1 << 5
	IB_WC_WITH_NETWORK_HDR_TYPE = 1 << 6
)

// enum ib_send_flags: ib_uverbs_send_wr.send_flags and the send_flags of
// the rxe send WQE. There are no IB_UVERBS_SEND_* names in the uapi headers.
const (
	IB_SEND_FENCE          = 1 << 0
	IB_SEND_SIGNALED       = 1 << 1
	IB_SEND_SOLICITED      = 1 << 2
	IB_SEND_INLINE         = 1 << 3
	IB_SEND_IP_CSUM        = 1 << 4
	IB_SEND_RESERVED_START = 1 << 26 // bits 26..31 are the drivers' own
	IB_SEND_RESERVED_END   = 1 << 31
)

// enum ib_event_type: ib_uverbs_async_event_desc.event_type.
const (
	IB_EVENT_CQ_ERR              = 0
	IB_EVENT_QP_FATAL            = 1
	IB_EVENT_QP_REQ_ERR          = 2
	IB_EVENT_QP_ACCESS_ERR       = 3
	IB_EVENT_COMM_EST            = 4
	IB_EVENT_SQ_DRAINED          = 5
	IB_EVENT_PATH_MIG            = 6
	IB_EVENT_PATH_MIG_ERR        = 7
	IB_EVENT_DEVICE_FATAL        = 8
	IB_EVENT_PORT_ACTIVE         = 9
	IB_EVENT_PORT_ERR            = 10
	IB_EVENT_LID_CHANGE          = 11
	IB_EVENT_PKEY_CHANGE         = 12
	IB_EVENT_SM_CHANGE           = 13
	IB_EVENT_SRQ_ERR             = 14
	IB_EVENT_SRQ_LIMIT_REACHED   = 15
	IB_EVENT_QP_LAST_WQE_REACHED = 16
	IB_EVENT_CLIENT_REREGISTER   = 17
	IB_EVENT_GID_CHANGE          = 18
	IB_EVENT_WQ_FATAL            = 19
)

// enum ib_qp_attr_mask: the attr_mask of MODIFY_QP and QUERY_QP and
// ib_uverbs_qp_attr.qp_attr_mask.
const (
	IB_QP_STATE               = 1 << 0
	IB_QP_CUR_STATE           = 1 << 1
	IB_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2
	IB_QP_ACCESS_FLAGS        = 1 << 3
	IB_QP_PKEY_INDEX          = 1 << 4
	IB_QP_PORT                = 1 << 5
	IB_QP_QKEY                = 1 << 6
	IB_QP_AV                  = 1 << 7
	IB_QP_PATH_MTU            = 1 << 8
	IB_QP_TIMEOUT             = 1 << 9
	IB_QP_RETRY_CNT           = 1 << 10
	IB_QP_RNR_RETRY           = 1 << 11
	IB_QP_RQ_PSN              = 1 << 12
	IB_QP_MAX_QP_RD_ATOMIC    = 1 << 13
	IB_QP_ALT_PATH            = 1 << 14
	IB_QP_MIN_RNR_TIMER       = 1 << 15
	IB_QP_SQ_PSN              = 1 << 16
	IB_QP_MAX_DEST_RD_ATOMIC  = 1 << 17
	IB_QP_PATH_MIG_STATE      = 1 << 18
	IB_QP_CAP                 = 1 << 19
	IB_QP_DEST_QPN            = 1 << 20
	IB_QP_RESERVED1           = 1 << 21
	IB_QP_RESERVED2           = 1 << 22
	IB_QP_RESERVED3           = 1 << 23
	IB_QP_RESERVED4           = 1 << 24
	IB_QP_RATE_LIMIT          = 1 << 25

	// IB_QP_ATTR_STANDARD_BITS (GENMASK(20, 0)) are the bits the legacy
	// MODIFY_QP accepts; EX_MODIFY_QP also takes IB_QP_RATE_LIMIT.
	IB_QP_ATTR_STANDARD_BITS = 1<<21 - 1

	// IB_USER_LEGACY_LAST_QP_ATTR_MASK is the last attr_mask bit of the
	// legacy MODIFY_QP. It was an enum of the uapi ib_user_verbs.h until
	// Linux 5.10; 5.11 removed it in favour of IB_QP_ATTR_STANDARD_BITS.
	// Kept here because rdma-core and older code use the name.
	IB_USER_LEGACY_LAST_QP_ATTR_MASK = IB_QP_DEST_QPN
)

// enum ib_qp_state: the QP states of MODIFY_QP and QUERY_QP.
const (
	IB_QPS_RESET = 0
	IB_QPS_INIT  = 1
	IB_QPS_RTR   = 2
	IB_QPS_RTS   = 3
	IB_QPS_SQD   = 4
	IB_QPS_SQE   = 5
	IB_QPS_ERR   = 6
)

// enum ib_mig_state: path_mig_state of the QP commands.
const (
	IB_MIG_MIGRATED = 0
	IB_MIG_REARM    = 1
	IB_MIG_ARMED    = 2
)

// enum ib_mtu: path_mtu, and max_mtu and active_mtu of QueryPortResp.
const (
	IB_MTU_256  = 1
	IB_MTU_512  = 2
	IB_MTU_1024 = 3
	IB_MTU_2048 = 4
	IB_MTU_4096 = 5
)

// enum ib_port_state: QueryPortResp.State.
const (
	IB_PORT_NOP          = 0
	IB_PORT_DOWN         = 1
	IB_PORT_INIT         = 2
	IB_PORT_ARMED        = 3
	IB_PORT_ACTIVE       = 4
	IB_PORT_ACTIVE_DEFER = 5
)

// enum ib_port_phys_state: QueryPortResp.PhysState.
const (
	IB_PORT_PHYS_STATE_SLEEP                       = 1
	IB_PORT_PHYS_STATE_POLLING                     = 2
	IB_PORT_PHYS_STATE_DISABLED                    = 3
	IB_PORT_PHYS_STATE_PORT_CONFIGURATION_TRAINING = 4
	IB_PORT_PHYS_STATE_LINK_UP                     = 5
	IB_PORT_PHYS_STATE_LINK_ERROR_RECOVERY         = 6
	IB_PORT_PHYS_STATE_PHY_TEST                    = 7
)

// enum ib_port_width: QueryPortResp.ActiveWidth.
const (
	IB_WIDTH_1X  = 1
	IB_WIDTH_2X  = 16
	IB_WIDTH_4X  = 2
	IB_WIDTH_8X  = 4
	IB_WIDTH_12X = 8
)

// enum ib_port_speed: QueryPortResp.ActiveSpeed.
const (
	IB_SPEED_SDR   = 1
	IB_SPEED_DDR   = 2
	IB_SPEED_QDR   = 4
	IB_SPEED_FDR10 = 8
	IB_SPEED_FDR   = 16
	IB_SPEED_EDR   = 32
	IB_SPEED_HDR   = 64
	IB_SPEED_NDR   = 128
)

// enum rdma_link_layer: QueryPortResp.LinkLayer.
const (
	IB_LINK_LAYER_UNSPECIFIED = 0
	IB_LINK_LAYER_INFINIBAND  = 1
	IB_LINK_LAYER_ETHERNET    = 2
)

// enum ib_atomic_cap: QueryDeviceResp.AtomicCap.
const (
	IB_ATOMIC_NONE = 0
	IB_ATOMIC_HCA  = 1
	IB_ATOMIC_GLOB = 2
)

// enum ib_odp_general_cap_bits and enum ib_odp_transport_cap_bits: the
// fields of ODPCaps.
const (
	IB_ODP_SUPPORT          = 1 << 0
	IB_ODP_SUPPORT_IMPLICIT = 1 << 1

	IB_ODP_SUPPORT_SEND     = 1 << 0
	IB_ODP_SUPPORT_RECV     = 1 << 1
	IB_ODP_SUPPORT_WRITE    = 1 << 2
	IB_ODP_SUPPORT_READ     = 1 << 3
	IB_ODP_SUPPORT_ATOMIC   = 1 << 4
	IB_ODP_SUPPORT_SRQ_RECV = 1 << 5
)

// enum ib_tm_cap_flags: TMCaps.Flags.
const IB_TM_CAP_RNDV_RC = 1 << 0

// enum ib_cq_attr_mask: ExModifyCQ.AttrMask.
const IB_CQ_MODERATE = 1 << 0

// enum ib_srq_attr_mask: ModifySRQ.AttrMask.
const (
	IB_SRQ_MAX_WR = 1 << 0
	IB_SRQ_LIMIT  = 1 << 1
)

// enum ib_mr_rereg_flags: ReregMR.Flags.
const (
	IB_MR_REREG_TRANS     = 1 << 0
	IB_MR_REREG_PD        = 1 << 1
	IB_MR_REREG_ACCESS    = 1 << 2
	IB_MR_REREG_SUPPORTED = 1<<3 - 1
)

// enum ib_mw_type: AllocMW.MWType.
const (
	IB_MW_TYPE_1 = 1
	IB_MW_TYPE_2 = 2
)

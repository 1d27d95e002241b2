// Constants from include/uapi/rdma/ib_user_ioctl_cmds.h (Linux 6.1;
// identical to rdma-core v43's and v44's kernel-headers/rdma/): the object,
// method and attribute ids of the core ioctl methods. The enums in the
// header are implicit sequences; the values here were printed by the C
// compiler from the header, and ib_user_ioctl_cmds_test.go checks them.
//
// Methods and attributes newer than 6.1 (DMAH, DMABUF objects,
// UVERBS_METHOD_REG_MR, the CQ/QP umem attributes, ...) are not here.

package abi

// UVERBS_ID_NS_MASK and UVERBS_ID_NS_SHIFT select the namespace bits of an
// attribute or method id: namespace 0 is the core, namespace 1
// (UVERBS_UDATA_DRIVER_DATA_NS) the driver.
const (
	UVERBS_ID_NS_MASK  = 0xF000
	UVERBS_ID_NS_SHIFT = 12
)

// The driver namespace and its bit in an id.
const (
	UVERBS_UDATA_DRIVER_DATA_NS   = 1
	UVERBS_UDATA_DRIVER_DATA_FLAG = 1 << UVERBS_ID_NS_SHIFT
)

// enum uverbs_default_objects: the object ids (IoctlHdr.ObjectID) of the
// core objects. DEVICE has no instances; its methods act on the context.
const (
	UVERBS_OBJECT_DEVICE       = 0
	UVERBS_OBJECT_PD           = 1
	UVERBS_OBJECT_COMP_CHANNEL = 2
	UVERBS_OBJECT_CQ           = 3
	UVERBS_OBJECT_QP           = 4
	UVERBS_OBJECT_SRQ          = 5
	UVERBS_OBJECT_AH           = 6
	UVERBS_OBJECT_MR           = 7
	UVERBS_OBJECT_MW           = 8
	UVERBS_OBJECT_FLOW         = 9
	UVERBS_OBJECT_XRCD         = 10
	UVERBS_OBJECT_RWQ_IND_TBL  = 11
	UVERBS_OBJECT_WQ           = 12
	UVERBS_OBJECT_FLOW_ACTION  = 13
	UVERBS_OBJECT_DM           = 14
	UVERBS_OBJECT_COUNTERS     = 15
	UVERBS_OBJECT_ASYNC_EVENT  = 16
)

// The attribute ids of the driver data of a method (UHW: user hardware
// data), in the driver namespace (UVERBS_UDATA_DRIVER_DATA_FLAG).
const (
	UVERBS_ATTR_UHW_IN  = UVERBS_UDATA_DRIVER_DATA_FLAG     // 0x1000: driver input (udata in)
	UVERBS_ATTR_UHW_OUT = UVERBS_UDATA_DRIVER_DATA_FLAG + 1 // 0x1001: driver output (udata out)
)

// enum uverbs_methods_device: the method ids (IoctlHdr.MethodID) of
// UVERBS_OBJECT_DEVICE.
const (
	UVERBS_METHOD_INVOKE_WRITE    = 0
	UVERBS_METHOD_INFO_HANDLES    = 1
	UVERBS_METHOD_QUERY_PORT      = 2
	UVERBS_METHOD_GET_CONTEXT     = 3
	UVERBS_METHOD_QUERY_CONTEXT   = 4
	UVERBS_METHOD_QUERY_GID_TABLE = 5
	UVERBS_METHOD_QUERY_GID_ENTRY = 6
)

// enum uverbs_attrs_invoke_write_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_CORE_IN   = 0
	UVERBS_ATTR_CORE_OUT  = 1
	UVERBS_ATTR_WRITE_CMD = 2
)

// enum uverbs_attrs_query_port_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_QUERY_PORT_PORT_NUM = 0
	UVERBS_ATTR_QUERY_PORT_RESP     = 1
)

// enum uverbs_attrs_get_context_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS = 0
	UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT     = 1
)

// enum uverbs_attrs_query_context_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS = 0
	UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT     = 1
)

// enum uverbs_attrs_create_cq_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_CREATE_CQ_HANDLE       = 0
	UVERBS_ATTR_CREATE_CQ_CQE          = 1
	UVERBS_ATTR_CREATE_CQ_USER_HANDLE  = 2
	UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL = 3
	UVERBS_ATTR_CREATE_CQ_COMP_VECTOR  = 4
	UVERBS_ATTR_CREATE_CQ_FLAGS        = 5
	UVERBS_ATTR_CREATE_CQ_RESP_CQE     = 6
	UVERBS_ATTR_CREATE_CQ_EVENT_FD     = 7
)

// enum uverbs_attrs_destroy_cq_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_DESTROY_CQ_HANDLE = 0
	UVERBS_ATTR_DESTROY_CQ_RESP   = 1
)

// enum uverbs_attrs_create_flow_action_esp: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_CREATE_FLOW_ACTION_ESP_HANDLE = 0
	UVERBS_ATTR_FLOW_ACTION_ESP_ATTRS         = 1
	UVERBS_ATTR_FLOW_ACTION_ESP_ESN           = 2
	UVERBS_ATTR_FLOW_ACTION_ESP_KEYMAT        = 3
	UVERBS_ATTR_FLOW_ACTION_ESP_REPLAY        = 4
	UVERBS_ATTR_FLOW_ACTION_ESP_ENCAP         = 5
)

// enum uverbs_attrs_modify_flow_action_esp: attribute ids (Attr.AttrID).
const UVERBS_ATTR_MODIFY_FLOW_ACTION_ESP_HANDLE = UVERBS_ATTR_CREATE_FLOW_ACTION_ESP_HANDLE

// enum uverbs_attrs_destroy_flow_action_esp: attribute ids (Attr.AttrID).
const UVERBS_ATTR_DESTROY_FLOW_ACTION_HANDLE = 0

// enum uverbs_attrs_create_qp_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_CREATE_QP_HANDLE           = 0
	UVERBS_ATTR_CREATE_QP_XRCD_HANDLE      = 1
	UVERBS_ATTR_CREATE_QP_PD_HANDLE        = 2
	UVERBS_ATTR_CREATE_QP_SRQ_HANDLE       = 3
	UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE   = 4
	UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE   = 5
	UVERBS_ATTR_CREATE_QP_IND_TABLE_HANDLE = 6
	UVERBS_ATTR_CREATE_QP_USER_HANDLE      = 7
	UVERBS_ATTR_CREATE_QP_CAP              = 8
	UVERBS_ATTR_CREATE_QP_TYPE             = 9
	UVERBS_ATTR_CREATE_QP_FLAGS            = 10
	UVERBS_ATTR_CREATE_QP_SOURCE_QPN       = 11
	UVERBS_ATTR_CREATE_QP_EVENT_FD         = 12
	UVERBS_ATTR_CREATE_QP_RESP_CAP         = 13
	UVERBS_ATTR_CREATE_QP_RESP_QP_NUM      = 14
)

// enum uverbs_attrs_destroy_qp_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_DESTROY_QP_HANDLE = 0
	UVERBS_ATTR_DESTROY_QP_RESP   = 1
)

// enum uverbs_methods_qp: the method ids (IoctlHdr.MethodID) of
// UVERBS_OBJECT_QP.
const (
	UVERBS_METHOD_QP_CREATE  = 0
	UVERBS_METHOD_QP_DESTROY = 1
)

// enum uverbs_attrs_create_srq_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_CREATE_SRQ_HANDLE       = 0
	UVERBS_ATTR_CREATE_SRQ_PD_HANDLE    = 1
	UVERBS_ATTR_CREATE_SRQ_XRCD_HANDLE  = 2
	UVERBS_ATTR_CREATE_SRQ_CQ_HANDLE    = 3
	UVERBS_ATTR_CREATE_SRQ_USER_HANDLE  = 4
	UVERBS_ATTR_CREATE_SRQ_MAX_WR       = 5
	UVERBS_ATTR_CREATE_SRQ_MAX_SGE      = 6
	UVERBS_ATTR_CREATE_SRQ_LIMIT        = 7
	UVERBS_ATTR_CREATE_SRQ_MAX_NUM_TAGS = 8
	UVERBS_ATTR_CREATE_SRQ_TYPE         = 9
	UVERBS_ATTR_CREATE_SRQ_EVENT_FD     = 10
	UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR  = 11
	UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE = 12
	UVERBS_ATTR_CREATE_SRQ_RESP_SRQ_NUM = 13
)

// enum uverbs_attrs_destroy_srq_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_DESTROY_SRQ_HANDLE = 0
	UVERBS_ATTR_DESTROY_SRQ_RESP   = 1
)

// enum uverbs_methods_srq: the method ids (IoctlHdr.MethodID) of
// UVERBS_OBJECT_SRQ.
const (
	UVERBS_METHOD_SRQ_CREATE  = 0
	UVERBS_METHOD_SRQ_DESTROY = 1
)

// enum uverbs_methods_cq: the method ids (IoctlHdr.MethodID) of
// UVERBS_OBJECT_CQ.
const (
	UVERBS_METHOD_CQ_CREATE  = 0
	UVERBS_METHOD_CQ_DESTROY = 1
)

// enum uverbs_attrs_create_wq_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_CREATE_WQ_HANDLE       = 0
	UVERBS_ATTR_CREATE_WQ_PD_HANDLE    = 1
	UVERBS_ATTR_CREATE_WQ_CQ_HANDLE    = 2
	UVERBS_ATTR_CREATE_WQ_USER_HANDLE  = 3
	UVERBS_ATTR_CREATE_WQ_TYPE         = 4
	UVERBS_ATTR_CREATE_WQ_EVENT_FD     = 5
	UVERBS_ATTR_CREATE_WQ_MAX_WR       = 6
	UVERBS_ATTR_CREATE_WQ_MAX_SGE      = 7
	UVERBS_ATTR_CREATE_WQ_FLAGS        = 8
	UVERBS_ATTR_CREATE_WQ_RESP_MAX_WR  = 9
	UVERBS_ATTR_CREATE_WQ_RESP_MAX_SGE = 10
	UVERBS_ATTR_CREATE_WQ_RESP_WQ_NUM  = 11
)

// enum uverbs_attrs_destroy_wq_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_DESTROY_WQ_HANDLE = 0
	UVERBS_ATTR_DESTROY_WQ_RESP   = 1
)

// enum uverbs_methods_wq: the method ids (IoctlHdr.MethodID) of
// UVERBS_OBJECT_WQ.
const (
	UVERBS_METHOD_WQ_CREATE  = 0
	UVERBS_METHOD_WQ_DESTROY = 1
)

// enum uverbs_methods_actions_flow_action_ops: the method ids (IoctlHdr.MethodID) of
// UVERBS_OBJECT_FLOW_ACTION.
const (
	UVERBS_METHOD_FLOW_ACTION_ESP_CREATE = 0
	UVERBS_METHOD_FLOW_ACTION_DESTROY    = 1
	UVERBS_METHOD_FLOW_ACTION_ESP_MODIFY = 2
)

// enum uverbs_attrs_alloc_dm_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_ALLOC_DM_HANDLE    = 0
	UVERBS_ATTR_ALLOC_DM_LENGTH    = 1
	UVERBS_ATTR_ALLOC_DM_ALIGNMENT = 2
)

// enum uverbs_attrs_free_dm_cmd_attr_ids: attribute ids (Attr.AttrID).
const UVERBS_ATTR_FREE_DM_HANDLE = 0

// enum uverbs_methods_dm: the method ids (IoctlHdr.MethodID) of
// UVERBS_OBJECT_DM.
const (
	UVERBS_METHOD_DM_ALLOC = 0
	UVERBS_METHOD_DM_FREE  = 1
)

// enum uverbs_attrs_reg_dm_mr_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_REG_DM_MR_HANDLE       = 0
	UVERBS_ATTR_REG_DM_MR_OFFSET       = 1
	UVERBS_ATTR_REG_DM_MR_LENGTH       = 2
	UVERBS_ATTR_REG_DM_MR_PD_HANDLE    = 3
	UVERBS_ATTR_REG_DM_MR_ACCESS_FLAGS = 4
	UVERBS_ATTR_REG_DM_MR_DM_HANDLE    = 5
	UVERBS_ATTR_REG_DM_MR_RESP_LKEY    = 6
	UVERBS_ATTR_REG_DM_MR_RESP_RKEY    = 7
)

// enum uverbs_methods_mr: the method ids (IoctlHdr.MethodID) of
// UVERBS_OBJECT_MR.
const (
	UVERBS_METHOD_DM_MR_REG     = 0
	UVERBS_METHOD_MR_DESTROY    = 1
	UVERBS_METHOD_ADVISE_MR     = 2
	UVERBS_METHOD_QUERY_MR      = 3
	UVERBS_METHOD_REG_DMABUF_MR = 4
)

// enum uverbs_attrs_mr_destroy_ids: attribute ids (Attr.AttrID).
const UVERBS_ATTR_DESTROY_MR_HANDLE = 0

// enum uverbs_attrs_advise_mr_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_ADVISE_MR_PD_HANDLE = 0
	UVERBS_ATTR_ADVISE_MR_ADVICE    = 1
	UVERBS_ATTR_ADVISE_MR_FLAGS     = 2
	UVERBS_ATTR_ADVISE_MR_SGE_LIST  = 3
)

// enum uverbs_attrs_query_mr_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_QUERY_MR_HANDLE      = 0
	UVERBS_ATTR_QUERY_MR_RESP_LKEY   = 1
	UVERBS_ATTR_QUERY_MR_RESP_RKEY   = 2
	UVERBS_ATTR_QUERY_MR_RESP_LENGTH = 3
	UVERBS_ATTR_QUERY_MR_RESP_IOVA   = 4
)

// enum uverbs_attrs_reg_dmabuf_mr_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_REG_DMABUF_MR_HANDLE       = 0
	UVERBS_ATTR_REG_DMABUF_MR_PD_HANDLE    = 1
	UVERBS_ATTR_REG_DMABUF_MR_OFFSET       = 2
	UVERBS_ATTR_REG_DMABUF_MR_LENGTH       = 3
	UVERBS_ATTR_REG_DMABUF_MR_IOVA         = 4
	UVERBS_ATTR_REG_DMABUF_MR_FD           = 5
	UVERBS_ATTR_REG_DMABUF_MR_ACCESS_FLAGS = 6
	UVERBS_ATTR_REG_DMABUF_MR_RESP_LKEY    = 7
	UVERBS_ATTR_REG_DMABUF_MR_RESP_RKEY    = 8
)

// enum uverbs_attrs_create_counters_cmd_attr_ids: attribute ids (Attr.AttrID).
const UVERBS_ATTR_CREATE_COUNTERS_HANDLE = 0

// enum uverbs_attrs_destroy_counters_cmd_attr_ids: attribute ids (Attr.AttrID).
const UVERBS_ATTR_DESTROY_COUNTERS_HANDLE = 0

// enum uverbs_attrs_read_counters_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_READ_COUNTERS_HANDLE = 0
	UVERBS_ATTR_READ_COUNTERS_BUFF   = 1
	UVERBS_ATTR_READ_COUNTERS_FLAGS  = 2
)

// enum uverbs_methods_actions_counters_ops: the method ids (IoctlHdr.MethodID) of
// UVERBS_OBJECT_COUNTERS.
const (
	UVERBS_METHOD_COUNTERS_CREATE  = 0
	UVERBS_METHOD_COUNTERS_DESTROY = 1
	UVERBS_METHOD_COUNTERS_READ    = 2
)

// enum uverbs_attrs_info_handles_id: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_INFO_OBJECT_ID     = 0
	UVERBS_ATTR_INFO_TOTAL_HANDLES = 1
	UVERBS_ATTR_INFO_HANDLES_LIST  = 2
)

// enum uverbs_methods_pd: the method ids (IoctlHdr.MethodID) of
// UVERBS_OBJECT_PD.
const UVERBS_METHOD_PD_DESTROY = 0

// enum uverbs_attrs_pd_destroy_ids: attribute ids (Attr.AttrID).
const UVERBS_ATTR_DESTROY_PD_HANDLE = 0

// enum uverbs_methods_mw: the method ids (IoctlHdr.MethodID) of
// UVERBS_OBJECT_MW.
const UVERBS_METHOD_MW_DESTROY = 0

// enum uverbs_attrs_mw_destroy_ids: attribute ids (Attr.AttrID).
const UVERBS_ATTR_DESTROY_MW_HANDLE = 0

// enum uverbs_methods_xrcd: the method ids (IoctlHdr.MethodID) of
// UVERBS_OBJECT_XRCD.
const UVERBS_METHOD_XRCD_DESTROY = 0

// enum uverbs_attrs_xrcd_destroy_ids: attribute ids (Attr.AttrID).
const UVERBS_ATTR_DESTROY_XRCD_HANDLE = 0

// enum uverbs_methods_ah: the method ids (IoctlHdr.MethodID) of
// UVERBS_OBJECT_AH.
const UVERBS_METHOD_AH_DESTROY = 0

// enum uverbs_attrs_ah_destroy_ids: attribute ids (Attr.AttrID).
const UVERBS_ATTR_DESTROY_AH_HANDLE = 0

// enum uverbs_methods_rwq_ind_tbl: the method ids (IoctlHdr.MethodID) of
// UVERBS_OBJECT_RWQ_IND_TBL.
const UVERBS_METHOD_RWQ_IND_TBL_DESTROY = 0

// enum uverbs_attrs_rwq_ind_tbl_destroy_ids: attribute ids (Attr.AttrID).
const UVERBS_ATTR_DESTROY_RWQ_IND_TBL_HANDLE = 0

// enum uverbs_methods_flow: the method ids (IoctlHdr.MethodID) of
// UVERBS_OBJECT_FLOW.
const UVERBS_METHOD_FLOW_DESTROY = 0

// enum uverbs_attrs_flow_destroy_ids: attribute ids (Attr.AttrID).
const UVERBS_ATTR_DESTROY_FLOW_HANDLE = 0

// enum uverbs_method_async_event: the method ids (IoctlHdr.MethodID) of
// UVERBS_OBJECT_ASYNC_EVENT.
const UVERBS_METHOD_ASYNC_EVENT_ALLOC = 0

// enum uverbs_attrs_async_event_create: attribute ids (Attr.AttrID).
const UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE = 0

// enum uverbs_attrs_query_gid_table_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE       = 0
	UVERBS_ATTR_QUERY_GID_TABLE_FLAGS            = 1
	UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES     = 2
	UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES = 3
)

// enum uverbs_attrs_query_gid_entry_cmd_attr_ids: attribute ids (Attr.AttrID).
const (
	UVERBS_ATTR_QUERY_GID_ENTRY_PORT       = 0
	UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX  = 1
	UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS      = 2
	UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY = 3
)

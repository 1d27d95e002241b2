// Constants from include/uapi/rdma/rdma_netlink.h (Linux 6.1).
//
// The names are the C names, so that a grep of the header finds them. Only
// the messages and attributes that purerdma speaks are here. The enums in
// the header are ABI and only grow at the end, so these values hold for
// newer kernels as well.

package abi

// Netlink clients of NETLINK_RDMA: the high bits of nlmsg_type.
const (
	RDMA_NL_RDMA_CM = 1
	RDMA_NL_IWCM    = 2
	RDMA_NL_RSVD    = 3
	RDMA_NL_LS      = 4
	RDMA_NL_NLDEV   = 5
)

// RDMA_NL_GET_TYPE builds an nlmsg_type from a client (RDMA_NL_NLDEV) and
// an operation of that client (RDMA_NLDEV_CMD_*).
func RDMA_NL_GET_TYPE(client, op uint16) uint16 { return client<<10 + op }

// RDMA_NL_GET_CLIENT is the client part of an nlmsg_type.
func RDMA_NL_GET_CLIENT(typ uint16) uint16 { return typ & (((1 << 6) - 1) << 10) >> 10 }

// RDMA_NL_GET_OP is the operation part of an nlmsg_type.
func RDMA_NL_GET_OP(typ uint16) uint16 { return typ & ((1 << 10) - 1) }

// enum rdma_nldev_command. "Can dump" marks those that answer NLM_F_DUMP.
const (
	RDMA_NLDEV_CMD_UNSPEC          = 0
	RDMA_NLDEV_CMD_GET             = 1 // can dump
	RDMA_NLDEV_CMD_SET             = 2
	RDMA_NLDEV_CMD_NEWLINK         = 3
	RDMA_NLDEV_CMD_DELLINK         = 4
	RDMA_NLDEV_CMD_PORT_GET        = 5 // can dump
	RDMA_NLDEV_CMD_SYS_GET         = 6
	RDMA_NLDEV_CMD_SYS_SET         = 7
	RDMA_NLDEV_CMD_RES_GET         = 9  // can dump
	RDMA_NLDEV_CMD_RES_QP_GET      = 10 // can dump
	RDMA_NLDEV_CMD_RES_CM_ID_GET   = 11 // can dump
	RDMA_NLDEV_CMD_RES_CQ_GET      = 12 // can dump
	RDMA_NLDEV_CMD_RES_MR_GET      = 13 // can dump
	RDMA_NLDEV_CMD_RES_PD_GET      = 14 // can dump
	RDMA_NLDEV_CMD_GET_CHARDEV     = 15
	RDMA_NLDEV_CMD_STAT_SET        = 16
	RDMA_NLDEV_CMD_STAT_GET        = 17 // can dump
	RDMA_NLDEV_CMD_STAT_DEL        = 18
	RDMA_NLDEV_CMD_RES_QP_GET_RAW  = 19
	RDMA_NLDEV_CMD_RES_CQ_GET_RAW  = 20
	RDMA_NLDEV_CMD_RES_MR_GET_RAW  = 21
	RDMA_NLDEV_CMD_RES_CTX_GET     = 22 // can dump
	RDMA_NLDEV_CMD_RES_SRQ_GET     = 23 // can dump
	RDMA_NLDEV_CMD_STAT_GET_STATUS = 24
)

// enum rdma_nldev_attr, the attributes purerdma reads or writes. The
// comments give the payload type the kernel uses.
const (
	RDMA_NLDEV_ATTR_UNSPEC          = 0
	RDMA_NLDEV_ATTR_PAD             = RDMA_NLDEV_ATTR_UNSPEC // aligns u64 payloads
	RDMA_NLDEV_ATTR_DEV_INDEX       = 1                      // u32
	RDMA_NLDEV_ATTR_DEV_NAME        = 2                      // string
	RDMA_NLDEV_ATTR_PORT_INDEX      = 3                      // u32; in a CMD_GET reply, the number of ports
	RDMA_NLDEV_ATTR_CAP_FLAGS       = 4                      // u64
	RDMA_NLDEV_ATTR_FW_VERSION      = 5                      // string
	RDMA_NLDEV_ATTR_NODE_GUID       = 6                      // u64, host byte order
	RDMA_NLDEV_ATTR_SYS_IMAGE_GUID  = 7                      // u64, host byte order
	RDMA_NLDEV_ATTR_SUBNET_PREFIX   = 8                      // u64, host byte order
	RDMA_NLDEV_ATTR_LID             = 9                      // u32
	RDMA_NLDEV_ATTR_SM_LID          = 10                     // u32
	RDMA_NLDEV_ATTR_LMC             = 11                     // u8
	RDMA_NLDEV_ATTR_PORT_STATE      = 12                     // u8
	RDMA_NLDEV_ATTR_PORT_PHYS_STATE = 13                     // u8
	RDMA_NLDEV_ATTR_DEV_NODE_TYPE   = 14                     // u8

	// The reply to RDMA_NLDEV_CMD_RES_GET (`rdma resource show`) nests
	// RES_SUMMARY > RES_SUMMARY_ENTRY > (ENTRY_NAME, ENTRY_CURR), one
	// entry per kind of tracked object. The kernel opens these nests
	// without NLA_F_NESTED.
	RDMA_NLDEV_ATTR_RES_SUMMARY            = 15 // nested table
	RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY      = 16 // nested table
	RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME = 17 // string: "pd", "cq", "qp", "cm_id", "mr", "ctx", "srq"
	RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR = 18 // u64, the number of objects

	RDMA_NLDEV_ATTR_NDEV_INDEX = 50 // u32
	RDMA_NLDEV_ATTR_NDEV_NAME  = 51 // string

	RDMA_NLDEV_ATTR_LINK_TYPE        = 65 // string, e.g. "rxe" or "siw"
	RDMA_NLDEV_SYS_ATTR_NETNS_MODE   = 66 // u8
	RDMA_NLDEV_ATTR_DEV_PROTOCOL     = 67 // string: ib, iw, usnic, roce, opa
	RDMA_NLDEV_NET_NS_FD             = 68 // u32
	RDMA_NLDEV_ATTR_CHARDEV_TYPE     = 69 // string, e.g. "uverbs"
	RDMA_NLDEV_ATTR_CHARDEV_NAME     = 70 // string, the /dev name without directory
	RDMA_NLDEV_ATTR_CHARDEV_ABI      = 71 // u64
	RDMA_NLDEV_ATTR_CHARDEV          = 72 // u64 dev_t, huge_encode_dev
	RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID = 73 // the header says u64; the kernel sends a u32

	RDMA_NLDEV_ATTR_DEV_DIM = 84 // u8
)

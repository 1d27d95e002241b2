// Structs and constants from include/uapi/rdma/rdma_user_cm.h (Linux 6.1;
// identical to rdma-core v44's kernel-headers/rdma/rdma_user_cm.h), the
// write() interface of the RDMA connection manager on /dev/infiniband/rdma_cm
// (drivers/infiniband/core/ucma.c), plus values from the kernel-internal
// include/rdma/rdma_cm.h (the event numbers) and include/rdma/ib_cm.h and
// drivers/infiniband/core/cma.c (the private data limits of the IB CM, which
// RoCE uses), which cross the ABI unchanged.
//
// A command is one write() of a UcmCmdHdr followed by the command body; the
// response, if any, is written by the kernel through the user pointer in
// the body (its Response field), never returned by write() itself. Struct
// names are the C names without the rdma_ prefix, in CamelCase (struct
// rdma_ucm_create_id is UcmCreateID); constant names are the C names. C
// fields named reserved keep their name. Socket addresses are byte arrays: a
// struct sockaddr_in6 is [28]byte, a struct __kernel_sockaddr_storage is
// [128]byte. The storage is 8-byte aligned in C (it is a union with a void
// *); every such field here already sits at a multiple of 8, and the structs
// without a uint64 of their own start with a blank [0]uint64 so that their
// Go alignment is C's 8 as well. The sizes, offsets and alignments are
// checked against the C compiler in rdma_user_cm_test.go.

package abi

// RDMA_USER_CM_ABI_VERSION is the ucma ABI version, as
// /sys/class/misc/rdma_cm/abi_version (or the RDMA_NLDEV_ATTR_CHARDEV_ABI of
// RDMA_NLDEV_CMD_GET_CHARDEV for "rdma_cm") reports it; these structs are
// version 4. librdmacm also accepts 3 (its RDMA_USER_CM_MIN_ABI_VERSION, in
// librdmacm/rdma_cma_abi.h; the kernel has no such constant), and then sets
// up QPs without RDMA_USER_CM_CMD_INIT_QP_ATTR. This package wants 4.
const RDMA_USER_CM_ABI_VERSION = 4

// RDMA_MAX_PRIVATE_DATA is the size of the private data buffers of
// UcmConnParam, UcmUDParam and UcmReject. The transport allows less; see
// CMA_MAX_PRIVATE_DATA_REQ and the constants after it.
const RDMA_MAX_PRIVATE_DATA = 256

// The command numbers, in UcmCmdHdr.Cmd.
const (
	RDMA_USER_CM_CMD_CREATE_ID     = 0
	RDMA_USER_CM_CMD_DESTROY_ID    = 1
	RDMA_USER_CM_CMD_BIND_IP       = 2 // legacy, sockaddr_in6 only; use BIND
	RDMA_USER_CM_CMD_RESOLVE_IP    = 3 // legacy, sockaddr_in6 only; use RESOLVE_ADDR
	RDMA_USER_CM_CMD_RESOLVE_ROUTE = 4
	RDMA_USER_CM_CMD_QUERY_ROUTE   = 5
	RDMA_USER_CM_CMD_CONNECT       = 6
	RDMA_USER_CM_CMD_LISTEN        = 7
	RDMA_USER_CM_CMD_ACCEPT        = 8
	RDMA_USER_CM_CMD_REJECT        = 9
	RDMA_USER_CM_CMD_DISCONNECT    = 10
	RDMA_USER_CM_CMD_INIT_QP_ATTR  = 11
	RDMA_USER_CM_CMD_GET_EVENT     = 12
	RDMA_USER_CM_CMD_GET_OPTION    = 13 // not implemented: the kernel returns ENOSYS
	RDMA_USER_CM_CMD_SET_OPTION    = 14
	RDMA_USER_CM_CMD_NOTIFY        = 15
	RDMA_USER_CM_CMD_JOIN_IP_MCAST = 16 // legacy, sockaddr_in6 only; use JOIN_MCAST
	RDMA_USER_CM_CMD_LEAVE_MCAST   = 17
	RDMA_USER_CM_CMD_MIGRATE_ID    = 18
	RDMA_USER_CM_CMD_QUERY         = 19
	RDMA_USER_CM_CMD_BIND          = 20
	RDMA_USER_CM_CMD_RESOLVE_ADDR  = 21
	RDMA_USER_CM_CMD_JOIN_MCAST    = 22
)

// enum rdma_ucm_port_space: UcmCreateID.PS. The values are bytes 4 and 5 of
// the IB service ID (IBTA Annex A11).
const (
	RDMA_PS_IPOIB = 0x0002
	RDMA_PS_IB    = 0x013F
	RDMA_PS_TCP   = 0x0106
	RDMA_PS_UDP   = 0x0111
)

// UcmQuery.Option: what RDMA_USER_CM_CMD_QUERY returns.
const (
	RDMA_USER_CM_QUERY_ADDR = 0 // a UcmQueryAddrResp
	RDMA_USER_CM_QUERY_PATH = 1 // a UcmQueryPathResp and its IBPathRecData
	RDMA_USER_CM_QUERY_GID  = 2 // a UcmQueryAddrResp holding struct sockaddr_ib
)

// UcmJoinMcast.JoinFlags.
const (
	RDMA_MC_JOIN_FLAG_FULLMEMBER          = 0
	RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER = 1
	RDMA_MC_JOIN_FLAG_RESERVED            = 2
)

// Option levels: UcmSetOption.Level.
const (
	RDMA_OPTION_ID = 0
	RDMA_OPTION_IB = 1
)

// Option names of level RDMA_OPTION_ID: UcmSetOption.Optname. The kernel
// checks Optlen: a __u8 for TOS and ACK_TIMEOUT, an int for REUSEADDR and
// AFONLY.
const (
	RDMA_OPTION_ID_TOS         = 0
	RDMA_OPTION_ID_REUSEADDR   = 1
	RDMA_OPTION_ID_AFONLY      = 2
	RDMA_OPTION_ID_ACK_TIMEOUT = 3
)

// Option names of level RDMA_OPTION_IB: UcmSetOption.Optname. The value is
// an array of IBPathRecData.
const RDMA_OPTION_IB_PATH = 1

// enum rdma_cm_event_type, from the kernel-internal include/rdma/rdma_cm.h
// (rdma_user_cm.h does not have it): UcmEventResp.Event. librdmacm's
// rdma_cma.h has the same values; newer librdmacm adds events after
// TIMEWAIT_EXIT (ADDRINFO_RESOLVED, ...) that it makes up itself and the
// kernel never sends.
const (
	RDMA_CM_EVENT_ADDR_RESOLVED    = 0
	RDMA_CM_EVENT_ADDR_ERROR       = 1
	RDMA_CM_EVENT_ROUTE_RESOLVED   = 2
	RDMA_CM_EVENT_ROUTE_ERROR      = 3
	RDMA_CM_EVENT_CONNECT_REQUEST  = 4
	RDMA_CM_EVENT_CONNECT_RESPONSE = 5
	RDMA_CM_EVENT_CONNECT_ERROR    = 6
	RDMA_CM_EVENT_UNREACHABLE      = 7
	RDMA_CM_EVENT_REJECTED         = 8
	RDMA_CM_EVENT_ESTABLISHED      = 9
	RDMA_CM_EVENT_DISCONNECTED     = 10
	RDMA_CM_EVENT_DEVICE_REMOVAL   = 11
	RDMA_CM_EVENT_MULTICAST_JOIN   = 12
	RDMA_CM_EVENT_MULTICAST_ERROR  = 13
	RDMA_CM_EVENT_ADDR_CHANGE      = 14
	RDMA_CM_EVENT_TIMEWAIT_EXIT    = 15
)

// The private data limits of the IB CM messages, from the kernel-internal
// include/rdma/ib_cm.h (enum, IB_CM_*_PRIVATE_DATA_SIZE); drivers/infiniband/
// core/cm.c rejects longer private data with EINVAL. They apply to IB and
// RoCE (rxe); iWARP (siw) carries private data in MPA instead, and its
// events report the length actually received.
const (
	IB_CM_REQ_PRIVATE_DATA_SIZE      = 92
	IB_CM_REP_PRIVATE_DATA_SIZE      = 196
	IB_CM_REJ_PRIVATE_DATA_SIZE      = 148
	IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE = 216
	IB_CM_SIDR_REP_PRIVATE_DATA_SIZE = 136
)

// CMA_HDR_SIZE is sizeof(struct cma_hdr) of drivers/infiniband/core/cma.c:
// the header (version, IP version, port, source and destination address)
// that the rdma_cm puts in front of the user's private data in a REQ or
// SIDR REQ of a non-AF_IB id (cma_user_data_offset). It is not a C constant.
const CMA_HDR_SIZE = 36

// The private data a user of the rdma_cm can send over IB or RoCE, per
// message: what is left of the IB CM limit after the cma header. A longer
// UcmConnParam.PrivateDataLen makes CONNECT (or ACCEPT, REJECT) fail with
// EINVAL. On the receiving side the event's private_data_len is always the
// full limit (CMA_MAX_PRIVATE_DATA_REQ for a CONNECT_REQUEST,
// IB_CM_REP_PRIVATE_DATA_SIZE for a CONNECT_RESPONSE, ...), the unused tail
// being zero. Not C constants.
const (
	CMA_MAX_PRIVATE_DATA_REQ      = IB_CM_REQ_PRIVATE_DATA_SIZE - CMA_HDR_SIZE      // rdma_connect, RC/UC
	CMA_MAX_PRIVATE_DATA_REP      = IB_CM_REP_PRIVATE_DATA_SIZE                     // rdma_accept, RC/UC
	CMA_MAX_PRIVATE_DATA_REJ      = IB_CM_REJ_PRIVATE_DATA_SIZE                     // rdma_reject
	CMA_MAX_PRIVATE_DATA_SIDR_REQ = IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE - CMA_HDR_SIZE // rdma_connect, UD
	CMA_MAX_PRIVATE_DATA_SIDR_REP = IB_CM_SIDR_REP_PRIVATE_DATA_SIZE                // rdma_accept, UD
)

// UcmCmdHdr starts every write(). Unlike CmdHdr of uverbs, In and Out count
// bytes: In is the length of the body after this header, Out the length of
// the response buffer the body points to.
//
// struct rdma_ucm_cmd_hdr
type UcmCmdHdr struct {
	Cmd uint32 // RDMA_USER_CM_CMD_*
	In  uint16
	Out uint16
}

// UcmCreateID is the body of RDMA_USER_CM_CMD_CREATE_ID; the response is a
// UcmCreateIDResp. UID is returned in every UcmEventResp of the id.
//
// struct rdma_ucm_create_id
type UcmCreateID struct {
	UID      uint64
	Response uint64
	PS       uint16 // RDMA_PS_*
	QPType   uint8  // IB_QPT_*, for RDMA_PS_IB only: TCP is RC, UDP and IPOIB are UD
	Reserved [5]uint8
}

// UcmCreateIDResp is the response of RDMA_USER_CM_CMD_CREATE_ID, and of
// JOIN_MCAST and JOIN_IP_MCAST (where ID names the multicast join).
//
// struct rdma_ucm_create_id_resp
type UcmCreateIDResp struct {
	ID uint32
}

// UcmDestroyID is the body of RDMA_USER_CM_CMD_DESTROY_ID, and of
// LEAVE_MCAST (where ID is the join's); the response is a UcmDestroyIDResp.
//
// struct rdma_ucm_destroy_id
type UcmDestroyID struct {
	Response uint64
	ID       uint32
	Reserved uint32
}

// UcmDestroyIDResp is the response of RDMA_USER_CM_CMD_DESTROY_ID and
// LEAVE_MCAST: how many events of the id were read.
//
// struct rdma_ucm_destroy_id_resp
type UcmDestroyIDResp struct {
	EventsReported uint32
}

// UcmBindIP is the body of the legacy RDMA_USER_CM_CMD_BIND_IP. Response is
// unused.
//
// struct rdma_ucm_bind_ip
type UcmBindIP struct {
	Response uint64
	Addr     [28]byte // struct sockaddr_in6 (or a sockaddr_in in its first 16 bytes)
	ID       uint32
}

// UcmBind is the body of RDMA_USER_CM_CMD_BIND.
//
// struct rdma_ucm_bind
type UcmBind struct {
	_        [0]uint64 // C's 8-byte alignment of the sockaddr storage
	ID       uint32
	AddrSize uint16 // bytes of Addr used
	Reserved uint16
	Addr     [128]byte // struct __kernel_sockaddr_storage
}

// UcmResolveIP is the body of the legacy RDMA_USER_CM_CMD_RESOLVE_IP.
//
// struct rdma_ucm_resolve_ip
type UcmResolveIP struct {
	SrcAddr   [28]byte // struct sockaddr_in6
	DstAddr   [28]byte // struct sockaddr_in6
	ID        uint32
	TimeoutMs uint32
}

// UcmResolveAddr is the body of RDMA_USER_CM_CMD_RESOLVE_ADDR. A SrcSize of
// 0 leaves the source to the routing table.
//
// struct rdma_ucm_resolve_addr
type UcmResolveAddr struct {
	_         [0]uint64 // C's 8-byte alignment of the sockaddr storage
	ID        uint32
	TimeoutMs uint32
	SrcSize   uint16
	DstSize   uint16
	Reserved  uint32
	SrcAddr   [128]byte // struct __kernel_sockaddr_storage
	DstAddr   [128]byte // struct __kernel_sockaddr_storage
}

// UcmResolveRoute is the body of RDMA_USER_CM_CMD_RESOLVE_ROUTE.
//
// struct rdma_ucm_resolve_route
type UcmResolveRoute struct {
	ID        uint32
	TimeoutMs uint32
}

// UcmQuery is the body of RDMA_USER_CM_CMD_QUERY (Option is
// RDMA_USER_CM_QUERY_*) and of the legacy RDMA_USER_CM_CMD_QUERY_ROUTE
// (Option unused; the response is a UcmQueryRouteResp).
//
// struct rdma_ucm_query
type UcmQuery struct {
	Response uint64
	ID       uint32
	Option   uint32
}

// UcmQueryRouteResp is the response of RDMA_USER_CM_CMD_QUERY_ROUTE. The
// kernel accepts a buffer that ends before IbdevIndex.
//
// struct rdma_ucm_query_route_resp
type UcmQueryRouteResp struct {
	NodeGUID   uint64 // __be64
	IBRoute    [2]IBUserPathRec
	SrcAddr    [28]byte // struct sockaddr_in6
	DstAddr    [28]byte // struct sockaddr_in6
	NumPaths   uint32
	PortNum    uint8
	Reserved   [3]uint8
	IbdevIndex uint32
	Reserved1  uint32
}

// UcmQueryAddrResp is the response of RDMA_USER_CM_CMD_QUERY with
// RDMA_USER_CM_QUERY_ADDR or RDMA_USER_CM_QUERY_GID. The kernel accepts a
// buffer that ends before IbdevIndex.
//
// struct rdma_ucm_query_addr_resp
type UcmQueryAddrResp struct {
	NodeGUID   uint64 // __be64
	PortNum    uint8
	Reserved   uint8
	PKey       uint16
	SrcSize    uint16    // bytes of SrcAddr used
	DstSize    uint16    // bytes of DstAddr used
	SrcAddr    [128]byte // struct __kernel_sockaddr_storage
	DstAddr    [128]byte // struct __kernel_sockaddr_storage
	IbdevIndex uint32
	Reserved1  uint32
}

// UcmQueryPathResp is the response of RDMA_USER_CM_CMD_QUERY with
// RDMA_USER_CM_QUERY_PATH. NumPaths IBPathRecData follow it (path_data[],
// not a Go field), as many as fit the response buffer.
//
// struct rdma_ucm_query_path_resp
type UcmQueryPathResp struct {
	NumPaths uint32
	Reserved uint32
}

// UcmConnParam holds the connection parameters of CONNECT and ACCEPT, and
// of a UcmEventResp of a connected (RC/UC) id.
//
// struct rdma_ucm_conn_param
type UcmConnParam struct {
	QPNum              uint32
	QKey               uint32
	PrivateData        [RDMA_MAX_PRIVATE_DATA]uint8
	PrivateDataLen     uint8
	SRQ                uint8
	ResponderResources uint8
	InitiatorDepth     uint8
	FlowControl        uint8
	RetryCount         uint8
	RNRRetryCount      uint8
	Valid              uint8 // must be nonzero in CONNECT; 0 in ACCEPT means defaults
}

// UcmUDParam holds the parameters of a UcmEventResp of a UD id.
//
// struct rdma_ucm_ud_param
type UcmUDParam struct {
	QPNum          uint32
	QKey           uint32
	AHAttr         AHAttr
	PrivateData    [RDMA_MAX_PRIVATE_DATA]uint8
	PrivateDataLen uint8
	Reserved       [7]uint8
}

// UcmECE holds the enhanced connection establishment options of CONNECT,
// ACCEPT and UcmEventResp.
//
// struct rdma_ucm_ece
type UcmECE struct {
	VendorID uint32
	AttrMod  uint32
}

// UcmConnect is the body of RDMA_USER_CM_CMD_CONNECT. The kernel accepts a
// body that ends after Reserved (no ECE).
//
// struct rdma_ucm_connect
type UcmConnect struct {
	ConnParam UcmConnParam
	ID        uint32
	Reserved  uint32
	ECE       UcmECE
}

// UcmListen is the body of RDMA_USER_CM_CMD_LISTEN.
//
// struct rdma_ucm_listen
type UcmListen struct {
	ID      uint32
	Backlog uint32
}

// UcmAccept is the body of RDMA_USER_CM_CMD_ACCEPT. If ConnParam.Valid is
// set, UID replaces the id's uid (the new id of a CONNECT_REQUEST has the
// listener's); if not, the kernel accepts with default parameters. The
// kernel accepts a body that ends after Reserved (no ECE).
//
// struct rdma_ucm_accept
type UcmAccept struct {
	UID       uint64
	ConnParam UcmConnParam
	ID        uint32
	Reserved  uint32
	ECE       UcmECE
}

// UcmReject is the body of RDMA_USER_CM_CMD_REJECT. Reason 0 means
// IB_CM_REJ_CONSUMER_DEFINED (28); the only other one allowed is
// IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED (35), for ECE.
//
// struct rdma_ucm_reject
type UcmReject struct {
	ID             uint32
	PrivateDataLen uint8
	Reason         uint8
	Reserved       [2]uint8
	PrivateData    [RDMA_MAX_PRIVATE_DATA]uint8
}

// UcmDisconnect is the body of RDMA_USER_CM_CMD_DISCONNECT.
//
// struct rdma_ucm_disconnect
type UcmDisconnect struct {
	ID uint32
}

// UcmInitQPAttr is the body of RDMA_USER_CM_CMD_INIT_QP_ATTR; the response
// is a QPAttr (struct ib_uverbs_qp_attr) for moving a QP to QPState.
//
// struct rdma_ucm_init_qp_attr
type UcmInitQPAttr struct {
	Response uint64
	ID       uint32
	QPState  uint32 // IB_QPS_*
}

// UcmNotify is the body of RDMA_USER_CM_CMD_NOTIFY.
//
// struct rdma_ucm_notify
type UcmNotify struct {
	ID    uint32
	Event uint32 // enum ib_event_type (IB_EVENT_*)
}

// UcmJoinIPMcast is the body of the legacy RDMA_USER_CM_CMD_JOIN_IP_MCAST;
// the response is a UcmCreateIDResp.
//
// struct rdma_ucm_join_ip_mcast
type UcmJoinIPMcast struct {
	Response uint64
	UID      uint64
	Addr     [28]byte // struct sockaddr_in6
	ID       uint32
}

// UcmJoinMcast is the body of RDMA_USER_CM_CMD_JOIN_MCAST; the response is
// a UcmCreateIDResp.
//
// struct rdma_ucm_join_mcast
type UcmJoinMcast struct {
	Response  uint64
	UID       uint64
	ID        uint32
	AddrSize  uint16
	JoinFlags uint16    // RDMA_MC_JOIN_FLAG_*
	Addr      [128]byte // struct __kernel_sockaddr_storage
}

// UcmGetEvent is the body of RDMA_USER_CM_CMD_GET_EVENT, which blocks
// until an event is queued unless the fd is non-blocking; the response is a
// UcmEventResp.
//
// struct rdma_ucm_get_event
type UcmGetEvent struct {
	Response uint64
}

// UcmEventResp is the response of RDMA_USER_CM_CMD_GET_EVENT. The kernel
// accepts a buffer that ends before Reserved (no ECE), as old 32-bit user
// space sends.
//
// Param is the C union param, which starts at offset 20 of the struct and
// so is only 4-byte aligned (the header says no member may need more); it
// is a byte array here, with no Go union type. Its bytes are a UcmConnParam
// (Param[0:272], struct offset 20) for a connected id, or a UcmUDParam
// (Param[0:304], struct offset 20) for a UD id; both start at Param[0], and
// both are 4-byte aligned in Go too.
//
// struct rdma_ucm_event_resp
type UcmEventResp struct {
	UID      uint64
	ID       uint32
	Event    uint32 // RDMA_CM_EVENT_*
	Status   uint32 // an int: 0, a negative errno, or the IB CM reject reason of REJECTED
	Param    [304]byte
	Reserved uint32
	ECE      UcmECE
}

// UcmSetOption is the body of RDMA_USER_CM_CMD_SET_OPTION. Optval points
// to Optlen bytes.
//
// struct rdma_ucm_set_option
type UcmSetOption struct {
	Optval  uint64
	ID      uint32
	Level   uint32 // RDMA_OPTION_ID, RDMA_OPTION_IB
	Optname uint32 // RDMA_OPTION_ID_*, RDMA_OPTION_IB_*
	Optlen  uint32
}

// UcmMigrateID is the body of RDMA_USER_CM_CMD_MIGRATE_ID, written to the
// destination rdma_cm fd; FD is the fd the id is on now. The response is a
// UcmMigrateResp.
//
// struct rdma_ucm_migrate_id
type UcmMigrateID struct {
	Response uint64
	ID       uint32
	FD       uint32
}

// UcmMigrateResp is the response of RDMA_USER_CM_CMD_MIGRATE_ID.
//
// struct rdma_ucm_migrate_resp
type UcmMigrateResp struct {
	EventsReported uint32
}

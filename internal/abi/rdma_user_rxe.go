// Structs and constants from include/uapi/rdma/rdma_user_rxe.h (Linux 6.1;
// identical to rdma-core v43's kernel-headers/rdma/rdma_user_rxe.h): the
// driver data of the soft-RoCE (rxe) driver and the layout of the queues it
// shares with user space through mmap.
//
// Unions are byte arrays of the union's size; the members of a union are
// separate struct types that overlay those bytes (RxeSendWr.Wr is read or
// written as RxeSendWrRDMA, RxeSendWrAtomic, RxeSendWrUD or RxeSendWrMW).
// Flexible array members have no Go field: the SGEs or inline data of a WQE
// follow RxeDMAInfo, and the slots of a queue follow RxeQueueBuf. The sizes
// and offsets are checked against the C compiler in rdma_user_rxe_test.go.
//
// Linux 6.2 (rdma-core v45's kernel-headers) added the flush member of the
// union (RxeSendWrFlush) and atomic_wr[] to the flexible union after
// RxeDMAInfo; Linux 6.12's header is the same. Neither changes a size or an
// offset of the 6.1 layout.

package abi

// RxeAV.NetworkType.
const (
	RXE_NETWORK_TYPE_IPV4 = 1
	RXE_NETWORK_TYPE_IPV6 = 2
)

// RxeGID is a GID: 16 bytes in network order. The C union also names them
// as two __be64, global.subnet_prefix and global.interface_id, which makes
// it 8-byte aligned; RxeGlobalRoute keeps the padding that causes.
//
// union rxe_gid
type RxeGID [16]uint8

// RxeGlobalRoute is the GRH part of RxeAV.
//
// struct rxe_global_route
type RxeGlobalRoute struct {
	DGID         RxeGID
	FlowLabel    uint32
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
	_            [1]uint8
}

// RxeAV is an rxe address vector. Since Linux 5.16 user space passes an
// address handle (RxeSendWrUD.AHNum) instead and leaves this zero.
//
// struct rxe_av
type RxeAV struct {
	PortNum     uint8
	NetworkType uint8 // RXE_NETWORK_TYPE_*
	DMAC        [6]uint8
	GRH         RxeGlobalRoute
	SGIDAddr    [28]uint8 // union { struct sockaddr_in; struct sockaddr_in6; }
	DGIDAddr    [28]uint8 // union { struct sockaddr_in; struct sockaddr_in6; }
}

// RxeSendWr is the work request part of RxeSendWQE. Wr is the C union wr;
// its bytes are an RxeSendWrRDMA, RxeSendWrAtomic, RxeSendWrUD or
// RxeSendWrMW depending on Opcode, each starting at the offset of Wr.
//
// struct rxe_send_wr
type RxeSendWr struct {
	WrID      uint64
	Reserved  uint32 // num_sge before Linux 6.1; the kernel reads RxeDMAInfo.NumSGE
	Opcode    uint32 // IB_UVERBS_WR_*
	SendFlags uint32 // IB_SEND_*
	Ex        uint32 // union ex: imm_data (__be32) or invalidate_rkey
	Wr        [120]byte
}

// RxeSendWrFlush is the flush member of the union RxeSendWr.Wr, for
// IB_UVERBS_WR_FLUSH (Linux 6.2 and later). rdma-core's rxe provider leaves
// Length zero and puts the length in RxeDMAInfo.Length and Resid, which is
// what the kernel's requester reads.
//
// struct rxe_send_wr, member wr.flush
type RxeSendWrFlush struct {
	RemoteAddr uint64
	Length     uint32
	RKey       uint32
	Type       uint8 // IB_FLUSH_GLOBAL, IB_FLUSH_PERSISTENT
	Level      uint8 // IB_FLUSH_RANGE, IB_FLUSH_MR
	_          [6]uint8
}

// RxeSendWrRDMA is the rdma member of the union RxeSendWr.Wr.
//
// struct rxe_send_wr, member wr.rdma
type RxeSendWrRDMA struct {
	RemoteAddr uint64
	RKey       uint32
	Reserved   uint32
}

// RxeSendWrAtomic is the atomic member of the union RxeSendWr.Wr.
//
// struct rxe_send_wr, member wr.atomic
type RxeSendWrAtomic struct {
	RemoteAddr uint64
	CompareAdd uint64
	Swap       uint64
	RKey       uint32
	Reserved   uint32
}

// RxeSendWrUD is the ud member of the union RxeSendWr.Wr, for UD QPs.
//
// struct rxe_send_wr, member wr.ud
type RxeSendWrUD struct {
	RemoteQPN  uint32
	RemoteQKey uint32
	PKeyIndex  uint16
	Reserved   uint16
	AHNum      uint32 // RxeCreateAHResp.AHNum; 0 means use AV
	Pad        [4]uint32
	AV         RxeAV
}

// RxeSendWrMW is the mw member of the union RxeSendWr.Wr, for
// IB_UVERBS_WR_BIND_MW.
//
// struct rxe_send_wr, member wr.mw
type RxeSendWrMW struct {
	Addr   uint64
	Length uint64
	MRLKey uint32
	MWRKey uint32
	RKey   uint32
	Access uint32 // IB_UVERBS_ACCESS_*
}

// RxeSGE is a scatter/gather element of an rxe WQE.
//
// struct rxe_sge
type RxeSGE struct {
	Addr   uint64
	Length uint32
	LKey   uint32
}

// MMInfo locates a queue for mmap(2) on the uverbs fd: map Size bytes at
// Offset.
//
// struct mminfo
type MMInfo struct {
	Offset uint64
	Size   uint32
	Pad    uint32
}

// RxeDMAInfo is the data part of a WQE. The C union of inline_data[],
// atomic_wr[] (Linux 6.2 and later) and sge[] (flexible arrays, not Go
// fields) follows it: NumSGE RxeSGE, the inline bytes, or the 8 bytes an
// IB_UVERBS_WR_ATOMIC_WRITE writes.
//
// struct rxe_dma_info
type RxeDMAInfo struct {
	Length    uint32
	Resid     uint32
	CurSGE    uint32
	NumSGE    uint32
	SGEOffset uint32
	Reserved  uint32
}

// RxeSendWQE is a slot of the send queue. The fields after Wr are the
// kernel's, except Iova (the remote address) and Dma, which user space sets.
//
// struct rxe_send_wqe
type RxeSendWQE struct {
	Wr          RxeSendWr
	Status      uint32
	State       uint32
	Iova        uint64
	Mask        uint32
	FirstPSN    uint32
	LastPSN     uint32
	AckLength   uint32
	SSN         uint32
	HasRdAtomic uint32
	Dma         RxeDMAInfo
}

// RxeRecvWQE is a slot of a receive queue or SRQ.
//
// struct rxe_recv_wqe
type RxeRecvWQE struct {
	WrID     uint64
	Reserved uint32
	Padding  uint32
	Dma      RxeDMAInfo
}

// RxeCreateAHResp is the driver response of CREATE_AH.
//
// struct rxe_create_ah_resp
type RxeCreateAHResp struct {
	AHNum    uint32
	Reserved uint32
}

// RxeCreateCQResp is the driver response of CREATE_CQ: where to map the CQ.
//
// struct rxe_create_cq_resp
type RxeCreateCQResp struct {
	MI MMInfo
}

// RxeResizeCQResp is the driver response of RESIZE_CQ: the new CQ mapping.
//
// struct rxe_resize_cq_resp
type RxeResizeCQResp struct {
	MI MMInfo
}

// RxeCreateQPResp is the driver response of CREATE_QP. The receive queue
// comes first; RQMI is unused when the QP has an SRQ.
//
// struct rxe_create_qp_resp
type RxeCreateQPResp struct {
	RQMI MMInfo
	SQMI MMInfo
}

// RxeCreateSRQResp is the driver response of CREATE_SRQ.
//
// struct rxe_create_srq_resp
type RxeCreateSRQResp struct {
	MI       MMInfo
	SRQNum   uint32
	Reserved uint32
}

// RxeModifySRQCmd is the driver data of MODIFY_SRQ: a user pointer to an
// MMInfo that receives the new queue when max_wr changes.
//
// struct rxe_modify_srq_cmd
type RxeModifySRQCmd struct {
	MmapInfoAddr uint64
}

// RxeQueueBuf is the header of every mapped rxe queue. The producer and
// consumer indices sit in cache lines of their own; slot i is at
// sizeof(RxeQueueBuf) + i<<Log2ElemSize (data[], not a Go field). Indices
// are kept masked with IndexMask.
//
// struct rxe_queue_buf
type RxeQueueBuf struct {
	Log2ElemSize  uint32
	IndexMask     uint32
	Pad1          [30]uint32
	ProducerIndex uint32
	Pad2          [31]uint32
	ConsumerIndex uint32
	Pad3          [31]uint32
}

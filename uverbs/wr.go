package uverbs

// SGE is a scatter/gather element (struct ibv_sge): Length bytes at Addr
// in the memory region with local key LKey. Addr is an address, as the
// device sees it: mr.MR.Addr plus an offset.
type SGE struct {
	Addr   uint64
	Length uint32
	LKey   uint32
}

// WROpcode is the operation of a send work request (enum ibv_wr_opcode).
type WROpcode uint32

// Send opcodes.
const (
	WRRDMAWrite         WROpcode = 0 // IB_UVERBS_WR_RDMA_WRITE
	WRRDMAWriteWithImm  WROpcode = 1 // IB_UVERBS_WR_RDMA_WRITE_WITH_IMM
	WRSend              WROpcode = 2 // IB_UVERBS_WR_SEND
	WRSendWithImm       WROpcode = 3 // IB_UVERBS_WR_SEND_WITH_IMM
	WRRDMARead          WROpcode = 4 // IB_UVERBS_WR_RDMA_READ
	WRAtomicCmpAndSwp   WROpcode = 5 // IB_UVERBS_WR_ATOMIC_CMP_AND_SWP
	WRAtomicFetchAndAdd WROpcode = 6 // IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD
	WRLocalInv          WROpcode = 7 // IB_UVERBS_WR_LOCAL_INV
	WRSendWithInv       WROpcode = 9 // IB_UVERBS_WR_SEND_WITH_INV
	// WRFlush (RDMA FLUSH) makes the responder's earlier writes to a
	// range or a whole region globally visible or persistent; it moves
	// no data. WRAtomicWrite (RDMA ATOMIC WRITE) writes 8 bytes that the
	// responder stores at once, after every earlier operation. Both came
	// in Linux 6.2 for rxe; PostSend refuses them (EOPNOTSUPP) unless
	// the device reports them (DeviceAttr.FlushTypes, .AtomicWrite).
	WRFlush       WROpcode = 14 // IB_UVERBS_WR_FLUSH
	WRAtomicWrite WROpcode = 15 // IB_UVERBS_WR_ATOMIC_WRITE
	// WRBindMW binds SendWR.MW to SendWR.Bind and gives it the rkey
	// SendWR.RKey (rxe; see MW).
	WRBindMW WROpcode = 8 // IB_UVERBS_WR_BIND_MW
)

//go:generate go run ../hack/namegen -type WROpcode -trimprefix IB_UVERBS_WR_ -doc "String returns the name of the IBV_WR_ constant without its prefix."

// FlushType is the placement type of an RDMA FLUSH (enum
// ibv_placement_type): what the responder guarantees for the data.
type FlushType uint8

// Flush types. A flush may name both.
const (
	// FlushGlobal makes the data globally visible at the responder.
	FlushGlobal FlushType = 1 << 0 // IB_FLUSH_GLOBAL
	// FlushPersistent makes the data persistent: rxe allows it only on
	// regions of persistent memory.
	FlushPersistent FlushType = 1 << 1 // IB_FLUSH_PERSISTENT
)

//go:generate go run ../hack/namegen -type FlushType -trimprefix IB_FLUSH_ -flags -doc "String returns \"GLOBAL\", \"PERSISTENT\" or both joined by \"|\"."

// FlushLevel is the selectivity level of an RDMA FLUSH (enum
// ibv_selectivity_level): what it covers.
type FlushLevel uint8

// Flush levels.
const (
	// FlushRange flushes SendWR.Length bytes at SendWR.RemoteAddr.
	FlushRange FlushLevel = 0 // IB_FLUSH_RANGE
	// FlushMR flushes the whole region RKey names.
	FlushMR FlushLevel = 1 // IB_FLUSH_MR
)

//go:generate go run ../hack/namegen -type FlushLevel -trimprefix IB_FLUSH_ -doc "String returns \"RANGE\" or \"MR\"."

// SendFlags modify a send work request (enum ibv_send_flags).
type SendFlags uint32

// Send flags.
const (
	// SendFence waits for earlier RDMA reads and atomics to complete.
	SendFence SendFlags = 1 << 0 // IB_SEND_FENCE
	// SendSignaled asks for a completion (always on with QPInit.SigAll).
	SendSignaled SendFlags = 1 << 1 // IB_SEND_SIGNALED
	// SendSolicited raises a solicited event at the receiver.
	SendSolicited SendFlags = 1 << 2 // IB_SEND_SOLICITED
	// SendInline copies the data into the queue at post time: the SGEs'
	// memory may be reused at once and needs no registration (LKey is
	// ignored), up to QPCap.MaxInlineData bytes.
	SendInline SendFlags = 1 << 3 // IB_SEND_INLINE
)

// sendFlags are the flags PostSend knows; the rest would reach the
// provider's ring unchecked.
const sendFlags = SendFence | SendSignaled | SendSolicited | SendInline

// SendWR is a send work request (struct ibv_send_wr, without the list
// link: PostSend takes a slice).
type SendWR struct {
	ID     uint64 // returned in the completion
	Opcode WROpcode
	Flags  SendFlags
	SGE    []SGE
	// Imm is the immediate data, in host byte order, of the *WithImm
	// opcodes, or the rkey to invalidate of WRSendWithInv.
	Imm uint32
	// RemoteAddr and RKey name the peer's memory for RDMA and atomics.
	RemoteAddr uint64
	RKey       uint32
	// CompareAdd is the value to compare (WRAtomicCmpAndSwp) or add
	// (WRAtomicFetchAndAdd); Swap replaces it on a match. The one SGE of an
	// atomic receives the remote value before the operation: 8 bytes.
	CompareAdd uint64
	Swap       uint64
	// Length, FlushType and FlushLevel describe a WRFlush, which takes
	// no SGEs: at FlushRange it covers Length bytes at RemoteAddr (as
	// ibv_wr_flush's len), at FlushMR the whole region of RKey.
	Length     uint32
	FlushType  FlushType
	FlushLevel FlushLevel
	// AtomicData are the 8 bytes a WRAtomicWrite stores at RemoteAddr
	// (8-byte aligned), copied into the queue at post time as
	// ibv_wr_atomic_write copies them; it takes no SGEs.
	AtomicData [8]byte
	// AH, RemoteQPN and RemoteQKey address a UD send.
	AH         *AH
	RemoteQPN  uint32
	RemoteQKey uint32
	// MW and Bind describe a WRBindMW, which takes no SGEs: the window,
	// and what of a registered region it opens to the peer. RKey is the
	// rkey the window gets, NextRKey of its current one.
	MW   *MW
	Bind MWBind
}

// MWBind is the part of a registered region a memory window opens
// (struct ibv_mw_bind_info).
type MWBind struct {
	LKey   uint32 // the region's local key
	Addr   uint64 // where the window starts, inside the region
	Length uint64
	// Access is the window's remote access: RemoteRead, RemoteWrite,
	// RemoteAtomic (the region must allow them too).
	Access Access
}

// RecvWR is a receive work request (struct ibv_recv_wr, without the list
// link).
type RecvWR struct {
	ID  uint64
	SGE []SGE
}

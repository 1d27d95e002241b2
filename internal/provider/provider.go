// Package provider defines what a kernel RDMA driver's user-space half
// (rdma-core's providers/<name>) supplies to purerdma: the sizes of its
// private command data, and the data path on the queues the kernel maps
// into the process. Each driver lives in a package of its own below this
// one; internal/provider/drivers lists them by the RDMA_DRIVER_* id the
// kernel reports, so a new driver is a new package and one line there.
//
// Through these interfaces drivers only ever see memory owned by
// purerdma's objects (the queues they mapped and the request copies
// below), never the caller's: an interface call makes its arguments
// escape. The drivers of this module are also called directly, by their
// concrete types, with the caller's own requests and completions, whose
// layouts SendWR, RecvWR and WC share (docs/architecture.md, The data
// path); their Put and Poll must not keep those pointers.
package provider

import (
	"errors"
	"sync"
)

// The kinds of error a driver returns, wrapped with what failed. They are
// not the public sentinels (internal/verbs cannot be imported here without
// a cycle, and the drivers should not decide what the public API says):
// verbs.Public maps each onto the public sentinel of its kind, once, and
// the public packages never look at a driver's errors otherwise. Their
// texts are bare kinds, as the public sentinels' are.
var (
	// ErrFull is returned by Put when the queue has no free slot.
	ErrFull = errors.New("queue full")
	// ErrStop is a send queue's PutPlain stopping before the end of its
	// batch, at a request it leaves to Put: not a failure, and never
	// returned to the library's users. One error result for both
	// outcomes leaves the caller one test after the call, where a count
	// to compare kept the batch's length on the caller's stack.
	ErrStop = errors.New("a request for Put")
	// ErrInvalid is returned for a request or a kernel response the
	// driver cannot take.
	ErrInvalid = errors.New("invalid argument")
	// ErrUnsupported is returned for an operation the driver does not
	// have.
	ErrUnsupported = errors.New("operation not supported by the driver")
	// ErrClosed is returned by a queue used after its Close.
	ErrClosed = errors.New("queue closed")
)

// Driver is the user-space half of one kernel driver.
type Driver interface {
	// Name is the driver's name as rdma-core spells it ("rxe", "siw",
	// "mlx5").
	Name() string
	// NewContext returns the driver's state for a device context about to
	// be opened on dev: the first half of GET_CONTEXT (the context's
	// Start fills the command's driver request, Opened reads its
	// response).
	NewContext(dev Device) (Context, error)
}

// Context is a driver's state for one open device context: what
// GET_CONTEXT's driver response told it (mlx5: the UAR pages and bfregs,
// the CQE version the kernel grants) and the device pages it mapped.
//
// Every create command runs in two halves around the kernel command: the
// driver's Create method fills the command's driver request (for mlx5
// the addresses of the queue buffer and doorbell record it has just
// allocated) and may lower or round the generic request's sizes; after
// the command succeeds uverbs writes the kernel's answer into the init
// value and calls Finish with the driver's response. If the command
// fails, uverbs calls Abort; if Finish fails, uverbs destroys the kernel
// object and then calls Abort. Memory the device can touch is released by
// Abort or by the object's Close, both of which uverbs calls only once
// the kernel object is gone.
type Context interface {
	// Udata returns the sizes in bytes of the driver's private request
	// and response for the uverbs write command cmd
	// (IB_USER_VERBS_CMD_*). The kernel refuses a response buffer that is
	// too small, and some drivers refuse any request data at all.
	Udata(cmd uint32) (in, out int)
	// Start fills req (Udata(GET_CONTEXT)'s in bytes, zeroed) before
	// GET_CONTEXT.
	Start(req []byte)
	// Opened finishes the context from GET_CONTEXT's driver response:
	// it maps the device pages the response describes. If GET_CONTEXT
	// or Opened fails, uverbs closes the command file without Close, so
	// an Opened that fails unmaps what it mapped first.
	Opened(resp []byte) error
	// CreateCQ is the first half of CREATE_CQ: it fills req and may
	// change init.CQE, the size the command asks for.
	CreateCQ(init *CQInit, req []byte) (Pending[CQ], error)
	// CreateQP is the first half of CREATE_QP: it fills req and may
	// change the capacities in init, which the command asks for.
	CreateQP(init *QPInit, req []byte) (Pending[Queues], error)
	// CreateSRQ is the first half of CREATE_SRQ: it fills req and may
	// change init.MaxWR and init.MaxSGE, which the command asks for.
	CreateSRQ(init *SRQInit, req []byte) (Pending[RQ], error)
	// NewAH builds what a UD send names an address handle by from its
	// attributes and the driver's CREATE_AH response. If it fails,
	// uverbs destroys the kernel's AH.
	NewAH(attr *AHAttr, resp []byte) (AH, error)
	// Close unmaps what Opened mapped. uverbs calls it after every object
	// of the context is destroyed and before it closes the command file.
	Close() error
}

// Pending is the second half of a create command.
type Pending[T any] interface {
	// Finish builds the object from the driver's response once the
	// command has succeeded and uverbs has written the kernel's answer
	// (handle, number, granted capacities) into the init value given to
	// the first half. Finish may lower those capacities to what the
	// driver's queues hold; uverbs reports them as the object's.
	Finish(resp []byte) (T, error)
	// Abort releases what the first half allocated, after the command
	// failed or after the kernel object Finish could not use was
	// destroyed. Should that destroy fail (the context is closing),
	// Abort waits for the command file to close, which destroys the
	// object: it then comes after the context's Close.
	Abort()
}

// KernelRings is the part of a Context that drivers whose rings the
// kernel allocates and user space maps (rxe, siw) share: GET_CONTEXT
// carries no driver data they use and they map nothing per context.
// Embed it.
type KernelRings struct{}

// Start sends no driver request.
func (KernelRings) Start([]byte) {}

// Opened has nothing to map.
func (KernelRings) Opened([]byte) error { return nil }

// Close has nothing to unmap.
func (KernelRings) Close() error { return nil }

// AfterCommand is the Pending of a create on such a driver: it sends no
// driver data and allocates nothing before the command, so its first
// half only captures what Finish needs and Abort has nothing to release.
type AfterCommand[T any] func(resp []byte) (T, error)

// Finish calls f.
func (f AfterCommand[T]) Finish(resp []byte) (T, error) { return f(resp) }

// Abort has nothing to release.
func (AfterCommand[T]) Abort() {}

// Queues are a new QP's send and receive queues. RQ is nil when the QP
// uses an SRQ.
type Queues struct {
	SQ SQ
	RQ RQ
}

// Device is what a driver needs from the opened device.
type Device interface {
	// Mmap maps size bytes of the command file at offset, shared. Device
	// pages (mlx5's UARs) are mapped write-only by the kernel's choice;
	// the mapping is read-write where the kernel allows it.
	Mmap(offset uint64, size int) ([]byte, error)
	// Munmap undoes Mmap.
	Munmap(b []byte) error
	// Doorbell tells the kernel that the send queue of the QP with the
	// given handle has new work (a POST_SEND write with no requests):
	// the doorbell of the drivers whose rings the kernel reads (rxe,
	// siw). Hardware drivers ring theirs with MMIO stores instead.
	Doorbell(qpHandle uint32) error
}

// The optional interfaces below are hooks some drivers need beyond the
// ones every driver has. The caller finds them by type assertion, once per
// call, so a driver without them (rxe, siw) runs as before.

// UARDevice is an optional interface of Device: the mlx5 driver's UAR
// object methods (MLX5_IB_METHOD_UAR_OBJ_ALLOC and _DESTROY on
// MLX5_IB_OBJECT_UAR), which a library that asks for dynamic UARs, as
// libmlx5 does, needs for every UAR page. internal/verbs' Context (the
// Device uverbs hands to NewContext) implements it; package mlx5 asserts
// it, and without it creates no QP on a kernel that hands out no UARs at
// GET_CONTEXT.
type UARDevice interface {
	// AllocUAR allocates a UAR page of the type
	// abi.MLX5_IB_UAPI_UAR_ALLOC_TYPE_BF or _NC and returns what the
	// kernel said about it. The driver maps it with Mmap.
	AllocUAR(allocType uint32) (UAR, error)
	// FreeUAR destroys the UAR object with the handle AllocUAR returned,
	// after the driver has unmapped its page. Closing the command file
	// destroys the objects left.
	FreeUAR(handle uint32) error
}

// UAR is a UAR page as MLX5_IB_METHOD_UAR_OBJ_ALLOC describes it.
type UAR struct {
	Handle     uint32 // the object's handle, for FreeUAR
	MmapOffset uint64 // where Mmap maps the page
	Length     uint32 // the mapping's length
	PageID     uint32 // the page's index, which CREATE_QP and CREATE_CQ name
}

// EventCounter is an optional interface of CQ, for a driver that counts
// the CQ's completion events (mlx5: the arm sequence number, which
// libibverbs' ibv_get_cq_event advances through the driver's cq_event).
// Package cq asserts it and calls Event, under the CQ's lock, for every
// completion event it reads from a channel for the CQ.
type EventCounter interface {
	Event()
}

// StateTracker is an optional interface of SQ, for a driver whose queues
// follow the QP's state (mlx5: a move to RESET removes the QP's
// completions from its CQs and starts the queues over, and the state gates
// posting, as libmlx5 does after MODIFY_QP). uverbs asserts it and calls
// Modified with the new state (IB_QPS_*) after every successful MODIFY_QP
// that sets the state, holding the QP's send and receive locks, unless the
// QP has been closed.
type StateTracker interface {
	Modified(state uint32)
}

// Teardown is an optional interface of Context, for a driver that owns
// memory the device can touch (mlx5's queue buffers and doorbell records,
// allocated by the driver rather than mapped from the kernel). When a
// context closes with objects still open, internal/verbs' Context.Close
// closes their queues before it closes the command file, and the kernel
// destroys those objects only when the file closes: a driver that freed
// the memory then would free it under a live device object. So Context.Close
// calls Closing before it closes any object and Closed once the file is
// closed. In between the driver keeps what the objects' Close (and Abort)
// would free and frees it in Closed; its own Close still unmaps the device
// pages (which hold the file open) but leaves the kernel objects that the
// file's close destroys. rxe and siw map their queues from the kernel and
// do not implement it.
type Teardown interface {
	Closing()
	Closed()
}

// CQInit describes a new CQ to its driver.
type CQInit struct {
	CQE uint32 // the size the command asks for; the driver may round it
	// Set by uverbs before Finish:
	Handle  uint32 // the kernel's CQ handle
	Granted uint32 // the kernel's cqe in the generic response
}

// AHAttr is an address handle's attributes (struct ib_uverbs_ah_attr),
// with the port's link layer, which mlx5 builds its address vector by.
type AHAttr struct {
	DGID         [16]byte
	FlowLabel    uint32
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
	DLID         uint16
	SL           uint8
	SrcPathBits  uint8
	StaticRate   uint8
	IsGlobal     bool
	PortNum      uint8
	Ethernet     bool // the port's link layer is Ethernet (RoCE)
}

// AH is what a UD send names its destination by: rxe a number the kernel
// gave, mlx5 an address vector copied into each WQE.
type AH struct {
	Num uint32
	AV  [AVSize]byte
}

// AVSize is the size of the largest address vector a driver copies into
// a UD WQE (mlx5: struct mlx5_wqe_av).
const AVSize = 48

// QPInit describes a new QP to its driver. The first half of CREATE_QP
// sees the capacities the caller asked for, and may change them; uverbs
// then sets Handle, QPNum and the capacities the kernel granted before
// Finish.
type QPInit struct {
	Handle     uint32 // the kernel's QP handle, for the doorbell
	QPNum      uint32
	Type       uint8 // IB_UVERBS_QPT_*
	MaxSendWR  uint32
	MaxRecvWR  uint32
	MaxSendSGE uint32
	MaxRecvSGE uint32
	MaxInline  uint32
	SRQ        bool
	SigAll     bool // every send is signaled (sq_sig_all)
	// SendCQ, RecvCQ and SRQQueue are the driver's objects the QP uses
	// (nil SRQQueue without an SRQ): mlx5 needs their numbers in its
	// WQEs and tables.
	SendCQ, RecvCQ CQ
	SRQQueue       RQ
	// SendCQLock and RecvCQLock are the locks of the public CQs behind
	// SendCQ and RecvCQ, the ones every call of their CQ methods is
	// made under. A driver that changes a CQ's ring from a QP's method
	// (mlx5: a move to RESET, or the QP's destruction, removes the QP's
	// completions from its CQs) takes them there, always after the QP's
	// own locks; nil when the caller has no public CQ (a driver's own
	// tests), which then calls nothing of the CQ concurrently.
	SendCQLock, RecvCQLock sync.Locker
}

// SRQInit describes a new SRQ to its driver, as QPInit does a QP.
type SRQInit struct {
	Handle uint32
	MaxWR  uint32
	MaxSGE uint32
	Limit  uint32
	CQ     CQ // the SRQ's CQ, nil unless an XRC SRQ
}

// SGE is a scatter/gather element (struct ibv_sge).
type SGE struct {
	Addr   uint64
	Length uint32
	LKey   uint32
}

// SendWR is a send work request, already checked against the QP's limits.
// Inline data is read from the SGE addresses.
//
// Its layout is uverbs.SendWR's, field for field (uverbs' TestSendWRLayout
// pins every offset): uverbs hands the caller's own request to the drivers
// of this module as a *SendWR, without a copy, unless it names an address
// handle or a memory window, or the QP signals every request (those go
// through a copy, which sets AH, MWRKey and the signaled flag). So a
// driver reads AH only on a UD QP and the bind fields only for
// IB_UVERBS_WR_BIND_MW.
type SendWR struct {
	ID         uint64
	Opcode     uint32 // IB_UVERBS_WR_*
	Flags      uint32 // IB_UVERBS_SEND_*
	SGE        []SGE
	Imm        uint32 // immediate data in host order, or the rkey to invalidate
	RemoteAddr uint64
	RKey       uint32
	CompareAdd uint64
	Swap       uint64
	// Length, FlushType and FlushLevel describe an IB_UVERBS_WR_FLUSH of
	// Length bytes at RemoteAddr (IB_FLUSH_*).
	Length     uint32
	FlushType  uint8
	FlushLevel uint8
	// AtomicData are the 8 bytes an IB_UVERBS_WR_ATOMIC_WRITE writes at
	// RemoteAddr.
	AtomicData [8]byte
	AH         *AH    // UD: from Context.NewAH; uverbs owns it
	RemoteQPN  uint32 // UD
	RemoteQKey uint32 // UD
	// MWRKey names the window an IB_UVERBS_WR_BIND_MW binds by its
	// current rkey, and RKey is the rkey it gets; BindLKey, BindAddr,
	// BindLength and BindAccess are the part of a region, by its lkey,
	// that the bind opens, with its access flags (IB_UVERBS_ACCESS_*).
	// uverbs.SendWR has the window's pointer where MWRKey and the padding
	// after it are.
	MWRKey     uint32
	_          uint32
	BindLKey   uint32
	BindAddr   uint64
	BindLength uint64
	BindAccess uint32
}

// RecvWR is a receive work request, in the layout of uverbs.RecvWR, which
// uverbs hands to the drivers of this module without a copy.
type RecvWR struct {
	ID  uint64
	SGE []SGE
}

// WC is a work completion in the layout of struct ib_uverbs_wc, with
// ImmData in host order.
type WC struct {
	ID           uint64
	Status       uint32
	Opcode       uint32
	VendorErr    uint32
	ByteLen      uint32
	ImmData      uint32
	QPNum        uint32
	SrcQP        uint32
	Flags        uint32
	PKeyIndex    uint16
	SLID         uint16
	SL           uint8
	DLIDPathBits uint8
	PortNum      uint8
}

// SQ is a send queue. Its methods are called with the QP's send lock held.
type SQ interface {
	// Put writes wr into the next free slot without handing it to the
	// device; ErrFull when there is none.
	Put(wr *SendWR) error
	// Flush hands the slots Put since the last Flush to the device and
	// rings the doorbell once.
	Flush() error
	// Idle reports whether the device is done with every slot handed to
	// it: a request still in the ring when the QP moves to ERR is flushed
	// rather than sent, and from Linux 6.12 rxe's doorbell returns before
	// the requester has sent anything.
	Idle() bool
	// Close unmaps the queue.
	Close() error
}

// RQ is a receive queue or an SRQ. Its methods are called with the
// queue's lock held.
type RQ interface {
	// Put writes wr into the next free slot without handing it to the
	// device; ErrFull when there is none.
	Put(wr *RecvWR) error
	// Flush hands the slots Put since the last Flush to the device.
	Flush() error
	// Close unmaps the queue.
	Close() error
}

// CQ is a completion queue. Its methods are called with the CQ's lock
// held.
type CQ interface {
	// Poll moves up to len(wc) of the oldest completions into wc, in
	// order, and returns how many. It may hand their slots back to the
	// kernel once, after the last one: on the rings whose consumer index
	// is a shared word (rxe) that is one atomic store per poll instead of
	// one per completion.
	Poll(wc []WC) int
	// Take copies the oldest completion into wc, as Poll of one does,
	// but may keep its slot from the kernel until Release: ibv_cq_ex's
	// next_poll, which hands the consumer index back once, in end_poll.
	// It reports false when the CQ is empty. A Poll hands back the slots
	// Take kept too.
	Take(wc *WC) bool
	// Release hands back the slots of the completions Take kept.
	Release()
	// Resize maps the ring the kernel described in resp, the driver's
	// RESIZE_CQ response, in place of the current one, and unmaps that.
	// The kernel has copied the completions not yet handed back into the
	// new ring, so the caller Releases before the command. A driver
	// without resize returns ErrUnsupported.
	Resize(resp []byte) error
	// Arm requests an event for the next (or next solicited) completion
	// if the driver does so in shared memory. It reports false when the
	// kernel must be asked with REQ_NOTIFY_CQ instead.
	Arm(solicitedOnly bool) bool
	// Close unmaps the queue.
	Close() error
}

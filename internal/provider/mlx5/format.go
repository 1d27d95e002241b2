package mlx5

import "encoding/binary"

// The device's formats: the segments a send WQE is built of, the receive
// and SRQ WQEs, the address vector, and the 64-byte CQE. They are the
// ConnectX's, not the kernel's (mlx5dv.h and wqe.h in rdma-core describe
// them), so they live here rather than in internal/abi. Every multi-byte
// field is big-endian; the structs are made of byte arrays so that Go lays
// them out exactly as the device does, with no padding and no alignment,
// and the queues are viewed through them in place with mem.At. The layout
// test spells out every offset.

// be16, be32 and be64 are big-endian fields.
type (
	be16 [2]byte
	be32 [4]byte
	be64 [8]byte
)

func (b *be16) get() uint16  { return binary.BigEndian.Uint16(b[:]) }
func (b *be16) set(v uint16) { binary.BigEndian.PutUint16(b[:], v) }
func (b *be32) get() uint32  { return binary.BigEndian.Uint32(b[:]) }
func (b *be32) set(v uint32) { binary.BigEndian.PutUint32(b[:], v) }
func (b *be64) get() uint64  { return binary.BigEndian.Uint64(b[:]) }
func (b *be64) set(v uint64) { binary.BigEndian.PutUint64(b[:], v) }

// Sizes of the queue elements.
const (
	sendWQEBB    = 64 // a send WQE is a whole number of these basic blocks
	sendWQEShift = 6
	segSize      = 16 // every segment is a whole number of these ("ds" units)
	cqeSize      = 64 // the CQE size the provider asks for
	avSize       = 48
)

// ctrlSeg opens every send WQE (struct mlx5_wqe_ctrl_seg).
type ctrlSeg struct {
	opmodIdxOpcode be32 // opcode in bits 0-7, WQE counter in 8-23, opcode modifier in 24-31
	qpnDS          be32 // size in 16-byte units in bits 0-5, QP number in 8-31
	signature      uint8
	dciStream      be16
	fmCESE         uint8 // fence mode, completion (CQ update), solicited event
	imm            be32  // immediate data, or the rkey a SEND_WITH_INV invalidates
}

// seg16 is any 16-byte segment as two big-endian double words, for
// writing a whole segment with two stores (setDataSeg; Put's straight
// path does the same through a pointer).
type seg16 struct {
	hi, lo be64
}

// dataSeg is a scatter/gather entry of a send or receive WQE (struct
// mlx5_wqe_data_seg).
type dataSeg struct {
	byteCount be32
	lkey      be32
	addr      be64
}

// raddrSeg names the remote memory of an RDMA or atomic operation (struct
// mlx5_wqe_raddr_seg).
type raddrSeg struct {
	raddr    be64
	rkey     be32
	reserved be32
}

// atomicSeg holds an atomic's operands (struct mlx5_wqe_atomic_seg).
type atomicSeg struct {
	swapAdd be64
	compare be64
}

// av is an address vector (struct mlx5_wqe_av): an AH's, copied into each
// UD WQE as its datagram segment, with the destination QP and Q_Key set.
type av struct {
	qkey       be32
	reserved   be32
	dqpDCT     be32 // destination QP in bits 0-23, MLX5_EXTENDED_UD_AV
	statRateSL uint8
	flMLID     uint8
	rlid       be16 // the remote LID; for RoCE v2 the UDP source port
	reserved0  [4]byte
	rmac       [6]byte
	tclass     uint8
	hopLimit   uint8
	grhGIDFL   be32 // GRH flag (IB), SGID index, flow label
	rgid       [16]byte
}

// srqNextSeg opens each SRQ WQE: the free list runs through it (struct
// mlx5_wqe_srq_next_seg).
type srqNextSeg struct {
	rsvd0        [2]byte
	nextWQEIndex be16
	signature    uint8
	rsvd1        [11]byte
}

// cqe is a 64-byte completion (struct mlx5_cqe64).
type cqe struct {
	rsvd0        [2]byte
	wqeID        be16
	rsvd4        [13]byte
	mlPath       uint8
	rsvd20       [4]byte
	slid         be16
	flagsRQPN    be32 // GRH in bits 28-29, SL in 24-27, source QP in 0-23
	hdsIPExt     uint8
	l4HdrTypeEtc uint8
	vlanInfo     be16
	srqnUIdx     be32 // CQE version 1: the QP's user index; version 0: the SRQ number
	immInvalPKey be32
	app          uint8
	appOp        uint8
	appInfo      be16
	byteCnt      be32
	timestamp    be64
	sopDropQPN   be32 // send opcode in bits 24-31 of a requester CQE, QP number in 0-23
	wqeCounter   be16
	signature    uint8
	opOwn        uint8 // CQE opcode in bits 4-7, inline scatter in 2-3, owner in 0
}

// errCQE is the error CQE's view of the same 64 bytes (struct
// mlx5_err_cqe).
type errCQE struct {
	rsvd0         [32]byte
	srqn          be32
	rsvd1         [18]byte
	vendorErrSynd uint8
	syndrome      uint8
	sWQEOpcodeQPN be32
	wqeCounter    be16
	signature     uint8
	opOwn         uint8
}

// Send opcodes (ctrlSeg.opmodIdxOpcode, and the top byte of a requester
// CQE's sopDropQPN).
const (
	opNOP          = 0x00
	opSendInval    = 0x01
	opRDMAWrite    = 0x08
	opRDMAWriteImm = 0x09
	opSend         = 0x0a
	opSendImm      = 0x0b
	opTSO          = 0x0e
	opRDMARead     = 0x10
	opAtomicCS     = 0x11
	opAtomicFA     = 0x12
	opSetPSV       = 0x20
	opUMR          = 0x25
	opMMO          = 0x2f
)

// ctrlSeg.fmCESE bits.
const (
	ctrlCQUpdate  = 2 << 2
	ctrlSolicited = 1 << 1
	ctrlFence     = 4 << 5
)

// Other WQE constants.
const (
	invalidLKey   = 0x100      // the lkey that ends a receive WQE's scatter list
	inlineSeg     = 0x80000000 // the flag of an inline segment's byte count
	extendedUDAV  = 0x80000000 // dqpDCT: the AV is the extended, 48-byte one
	doorbellRecvI = 0          // word of a QP's doorbell record: receive counter
	doorbellSendI = 1          // word of a QP's doorbell record: send counter
)

// CQE opcodes (cqe.opOwn >> 4).
const (
	cqeReq        = 0
	cqeRespWrImm  = 1
	cqeRespSend   = 2
	cqeRespSendI  = 3
	cqeRespSendIn = 4
	cqeResizeCQ   = 5
	cqeNoPacket   = 6
	cqeSigErr     = 12
	cqeReqErr     = 13
	cqeRespErr    = 14
	cqeInvalid    = 15
)

// cqe.opOwn bits below the opcode.
const (
	cqeOwnerMask    = 1
	inlineScatter32 = 0x4
	inlineScatter64 = 0x8
)

// Error CQE syndromes (errCQE.syndrome).
const (
	syndLocalLengthErr   = 0x01
	syndLocalQPOpErr     = 0x02
	syndLocalProtErr     = 0x04
	syndWRFlushErr       = 0x05
	syndMWBindErr        = 0x06
	syndBadRespErr       = 0x10
	syndLocalAccessErr   = 0x11
	syndRemoteInvalReq   = 0x12
	syndRemoteAccessErr  = 0x13
	syndRemoteOpErr      = 0x14
	syndTransportRetry   = 0x15
	syndRNRRetryExcErr   = 0x16
	syndRemoteAbortedErr = 0x22
	vendorSyndODPPFault  = 0x93 // errCQE.vendorErrSynd of an ODP page fault
)

// CQ doorbell.
const (
	cqDoorbell     = 0x20    // offset of the CQ doorbell register in a UAR
	cqDBReqNotSol  = 1 << 24 // arm for solicited completions only
	cqDBReqNot     = 0 << 24 // arm for the next completion
	cqSetCI        = 0       // word of a CQ's doorbell record: consumer index
	cqArmDB        = 1       // word of a CQ's doorbell record: the last arm
	bfOffset       = 0x800   // offset of the first BlueFlame register in a UAR
	adapterPage    = 4096    // a UAR's size (MLX5_ADAPTER_PAGE_SIZE)
	bfregsPerUAR   = 4       // bfreg indices per UAR
	nonFPBfregsUAR = 2       // the bfregs of a UAR that are not fast-path
)

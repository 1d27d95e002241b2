package uverbs

import (
	"fmt"

	"github.com/purerdma/purerdma/internal/abi"
)

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
	WRRDMAWrite         WROpcode = abi.IB_UVERBS_WR_RDMA_WRITE
	WRRDMAWriteWithImm  WROpcode = abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM
	WRSend              WROpcode = abi.IB_UVERBS_WR_SEND
	WRSendWithImm       WROpcode = abi.IB_UVERBS_WR_SEND_WITH_IMM
	WRRDMARead          WROpcode = abi.IB_UVERBS_WR_RDMA_READ
	WRAtomicCmpAndSwp   WROpcode = abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP
	WRAtomicFetchAndAdd WROpcode = abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD
	WRLocalInv          WROpcode = abi.IB_UVERBS_WR_LOCAL_INV
	WRSendWithInv       WROpcode = abi.IB_UVERBS_WR_SEND_WITH_INV
)

var wrOpcodeNames = map[WROpcode]string{
	WRRDMAWrite: "RDMA_WRITE", WRRDMAWriteWithImm: "RDMA_WRITE_WITH_IMM",
	WRSend: "SEND", WRSendWithImm: "SEND_WITH_IMM", WRRDMARead: "RDMA_READ",
	WRAtomicCmpAndSwp: "ATOMIC_CMP_AND_SWP", WRAtomicFetchAndAdd: "ATOMIC_FETCH_AND_ADD",
	WRLocalInv: "LOCAL_INV", WRSendWithInv: "SEND_WITH_INV",
}

// String returns the name of the IBV_WR_ constant without its prefix.
func (o WROpcode) String() string {
	if s, ok := wrOpcodeNames[o]; ok {
		return s
	}
	return fmt.Sprintf("WROpcode(%d)", uint32(o))
}

// SendFlags modify a send work request (enum ibv_send_flags).
type SendFlags uint32

// Send flags.
const (
	// SendFence waits for earlier RDMA reads and atomics to complete.
	SendFence SendFlags = abi.IB_SEND_FENCE
	// SendSignaled asks for a completion (always on with QPInit.SigAll).
	SendSignaled SendFlags = abi.IB_SEND_SIGNALED
	// SendSolicited raises a solicited event at the receiver.
	SendSolicited SendFlags = abi.IB_SEND_SOLICITED
	// SendInline copies the data into the queue at post time: the SGEs'
	// memory may be reused at once and needs no registration (LKey is
	// ignored), up to QPCap.MaxInlineData bytes.
	SendInline SendFlags = abi.IB_SEND_INLINE
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
	// AH, RemoteQPN and RemoteQKey address a UD send.
	AH         *AH
	RemoteQPN  uint32
	RemoteQKey uint32
}

// RecvWR is a receive work request (struct ibv_recv_wr, without the list
// link).
type RecvWR struct {
	ID  uint64
	SGE []SGE
}

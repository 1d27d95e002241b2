package siw

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// CQ is the driver's CQ as a type package cq names: its Poll, reached
// through a type switch rather than the provider.CQ interface, writes
// straight into the caller's completions, which an interface call would
// make escape.
type CQ = completionQueue

// completionQueue is a mapped CQ: num CQEs, then struct siw_cq_ctrl.
type completionQueue struct {
	dev  provider.Device
	buf  []byte
	num  uint32
	ctrl int    // offset of struct siw_cq_ctrl
	get  uint32 // slot of the next completion
	// words is the address of element 0's flags word, nil once closed:
	// loaded whole, it leaves PollStatus one add for a flags word's
	// address, where the compiler folded a base and the word's offset
	// computed in the poll into two; the other fields are at constant
	// offsets from it.
	words unsafe.Pointer
	// last is the byte offset of element num-1, where PollStatus wraps
	// (mapCQ refuses num 0): kept rather than worked out in every poll.
	last uintptr
}

// mapped sets words and last once buf is mapped (mapCQ).
func (q *completionQueue) mapped() {
	q.words = unsafe.Pointer(&q.buf[flagsWord])
	q.last = uintptr(q.num-1) * cqeSize
}

// wcStatus maps enum siw_wc_status to enum ib_wc_status (siw_cq.c,
// rdma-core's map_cqe_status).
// The last entry is for every status beyond the enum, so that a lookup
// needs no bounds check (min caps the index).
var wcStatus = [abi.SIW_NUM_WC_STATUS + 1]uint32{
	abi.SIW_WC_SUCCESS:         abi.IB_WC_SUCCESS,
	abi.SIW_WC_LOC_LEN_ERR:     abi.IB_WC_LOC_LEN_ERR,
	abi.SIW_WC_LOC_PROT_ERR:    abi.IB_WC_LOC_PROT_ERR,
	abi.SIW_WC_LOC_QP_OP_ERR:   abi.IB_WC_LOC_QP_OP_ERR,
	abi.SIW_WC_WR_FLUSH_ERR:    abi.IB_WC_WR_FLUSH_ERR,
	abi.SIW_WC_BAD_RESP_ERR:    abi.IB_WC_BAD_RESP_ERR,
	abi.SIW_WC_LOC_ACCESS_ERR:  abi.IB_WC_LOC_ACCESS_ERR,
	abi.SIW_WC_REM_ACCESS_ERR:  abi.IB_WC_REM_ACCESS_ERR,
	abi.SIW_WC_REM_INV_REQ_ERR: abi.IB_WC_REM_INV_REQ_ERR,
	abi.SIW_WC_GENERAL_ERR:     abi.IB_WC_GENERAL_ERR,
	abi.SIW_NUM_WC_STATUS:      abi.IB_WC_GENERAL_ERR,
}

// wcOpcode maps enum siw_opcode to the work completion opcode (siw_cq.c's
// map_wc_opcode, rdma-core's map_cqe_opcode). A send with immediate data
// or with invalidate completes as a send, and so does an opcode beyond the
// enum: IB_WC_SEND is 0, what the entries up to 255 hold, so that the
// CQE's opcode byte indexes the table with no bounds check and no cap.
var wcOpcode = [1 << 8]uint32{
	abi.SIW_OP_WRITE:           abi.IB_WC_RDMA_WRITE,
	abi.SIW_OP_READ:            abi.IB_WC_RDMA_READ,
	abi.SIW_OP_READ_LOCAL_INV:  abi.IB_WC_RDMA_READ,
	abi.SIW_OP_SEND:            abi.IB_WC_SEND,
	abi.SIW_OP_SEND_WITH_IMM:   abi.IB_WC_SEND,
	abi.SIW_OP_SEND_REMOTE_INV: abi.IB_WC_SEND,
	abi.SIW_OP_FETCH_AND_ADD:   abi.IB_WC_FETCH_ADD,
	abi.SIW_OP_COMP_AND_SWAP:   abi.IB_WC_COMP_SWAP,
	abi.SIW_OP_RECEIVE:         abi.IB_WC_RECV,
	abi.SIW_OP_READ_RESPONSE:   abi.IB_WC_RDMA_READ, // never completed
	abi.SIW_OP_INVAL_STAG:      abi.IB_WC_LOCAL_INV,
	abi.SIW_OP_REG_MR:          abi.IB_WC_REG_MR,
}

// Poll takes up to len(wcs) completions, each element handed back as soon
// as it is copied (every siw element has its own valid flag, cleared one
// by one, as rdma-core's siw_poll_cq does). The fields are set one by one
// in the loop: a call and a composite literal per completion were half of
// a poll of many.
func (q *completionQueue) Poll(wcs []provider.WC) int {
	n, _ := q.PollStatus(wcs)
	return n
}

// PollStatus is Poll, and reports whether any completion it moved failed
// (package cq, which calls it directly, then clears what a failure leaves
// undefined).
func (q *completionQueue) PollStatus(wcs []provider.WC) (int, bool) {
	words := q.words
	if words == nil {
		return 0, false // closed
	}
	// The elements are read without a bounds check, which would keep the
	// mapping's length live in a register too (the loop has too few):
	// mapCQ mapped num elements (mapQueue checked the length), and the
	// loop walks their byte offsets, from get's, up to last's. The last
	// element is tested before the step (after it, the test cost the
	// loop a register move).
	off, last := uintptr(q.get)*cqeSize, q.last
	// The completions are written by byte offset into wcs, which
	// addresses them with no multiply by their size (an index took three
	// instructions per completion); n is worked out once, after the loop.
	const step = unsafe.Sizeof(provider.WC{})
	out, o, full := unsafe.Pointer(unsafe.SliceData(wcs)), uintptr(0), uintptr(len(wcs))*step
	failed := uint16(0)
	for ; o < full; o += step {
		word := unsafe.Add(words, off)
		e := unsafe.Add(word, -flagsWord)
		// The flags word by atomic.LoadUint32, the intrinsic itself:
		// atomic.Uint32's Load method, inlined, leaves a no-op behind.
		w := atomic.LoadUint32((*uint32)(word))
		if w&abi.SIW_WQE_VALID == 0 {
			break
		}
		// The rest of the element, opcode and status too, is read after
		// the flags word: whole bytes of the ring, where taking them out
		// of w would cost shifts and copies.
		cqe := (*abi.SiwCQE)(e)
		// Zeroed whole first (a few wide stores; a composite literal
		// would be built on the stack and copied), then the fields siw
		// has set one by one.
		wc := (*provider.WC)(unsafe.Add(out, o))
		*wc = provider.WC{}
		wc.ID = cqe.ID
		wc.Opcode = wcOpcode[cqe.Opcode]
		wc.ByteLen = cqe.Bytes
		wc.QPNum = uint32(cqe.QPID)
		// The status as siw's, mapped after the loop if any failed: a
		// store and an or, where a test here also made the loop load
		// the table's address on its way.
		status := cqe.Status
		wc.Status = uint32(status)
		failed |= status
		// The kernel sets REM_INVAL only in CQs of kernel users today
		// (siw_rqe_complete) and writes imm_data 0: siw has no immediate
		// data, so there is never IB_WC_WITH_IMM.
		if w&abi.SIW_WQE_REM_INVAL != 0 {
			wc.Flags = abi.IB_WC_WITH_INVALIDATE
			wc.ImmData = uint32(cqe.ImmData) // inval_stag, first 4 bytes of the union
		}
		// Hand the element back only after it has been copied, clearing
		// the flags byte alone as rdma-core's siw_poll_cq does: opcode and
		// status keep the values just loaded, so the ring holds the same
		// bytes as under rdma-core.
		mem.StoreRelease((*atomic.Uint32)(word), w&^0xff)
		if off == last {
			off = 0
		} else {
			off += cqeSize
		}
	}
	if o == 0 {
		return 0, false // empty, a busy-wait's common answer: no division
	}
	q.get = uint32(off / cqeSize)
	if failed != 0 {
		// enum siw_wc_status to enum ib_wc_status, for the completions
		// moved (SIW_WC_SUCCESS and IB_WC_SUCCESS are both 0), by offset
		// as the loop wrote them: a slice of wcs would bring a bounds
		// check, and its panic a stack frame, to every poll.
		for d := uintptr(0); d < o; d += step {
			wc := (*provider.WC)(unsafe.Add(out, d))
			wc.Status = wcStatus[min(wc.Status, abi.SIW_NUM_WC_STATUS)]
		}
	}
	return int(o / step), failed != 0
}

// Take is Poll of one: every siw element is handed back on its own, by
// clearing its valid flag, so there is nothing to keep for Release.
func (q *completionQueue) Take(wc *provider.WC) bool {
	n, _ := q.PollStatus(unsafe.Slice(wc, 1))
	return n == 1
}

// Release does nothing: Take handed each element back already.
func (q *completionQueue) Release() {}

// Resize is unsupported: siw has no resize_cq, in the kernel or in
// rdma-core's libsiw.
func (q *completionQueue) Resize([]byte) error {
	return fmt.Errorf("siw: resize CQ: %w", provider.ErrUnsupported)
}

// Arm stores what rdma-core's siw_notify_cq stores: the kernel disarms
// the CQ (back to SIW_NOTIFY_NOT) when it signals, in siw_cq_notify_now,
// and the next completion event then needs a new Arm.
func (q *completionQueue) Arm(solicitedOnly bool) bool {
	flags := uint32(abi.SIW_NOTIFY_SOLICITED | abi.SIW_NOTIFY_NEXT_COMPLETION)
	if solicitedOnly {
		flags = abi.SIW_NOTIFY_SOLICITED
	}
	mem.Uint32(q.buf, q.ctrl).Store(flags)
	return true
}

func (q *completionQueue) Close() error {
	q.words = nil
	return unmap(q.dev, &q.buf)
}

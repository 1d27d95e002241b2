package siw

import (
	"fmt"
	"sync/atomic"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// Byte offsets in struct siw_sqe.
const (
	sqeSGE    = 24               // sge[0]
	sqeInline = sqeSGE + 16      // sge[1]: inline data start here
	sqeEnd    = sqeInline + 16*5 // end of sge[SIW_MAX_SGE-1]
)

// SQ is the driver's send queue as a type uverbs names: its Put,
// reached through a type switch rather than the provider interface, reads
// the caller's own request, which an interface call would make escape.
type SQ = sendQueue

// sendQueue is the mapped SQ of one QP.
type sendQueue struct {
	dev    provider.Device
	buf    []byte
	num    uint32 // elements in the ring
	handle uint32 // the QP's handle, for the doorbell
	maxSGE int

	put      uint32 // slot of the next Put
	first    uint32 // slot of the first Put since the last Flush
	pending  uint32 // Puts since the last Flush
	mustRing bool   // the last doorbell failed: ring on the next Flush
	// plainOps are the opcodes PutPlain takes, as bits: those of
	// plainOpsAll that the QP's owner takes without further checks
	// (SetPlainOps). Atomic: the owner changes them with the QP's
	// attributes, while requests may be posted.
	plainOps uint32 // used through sync/atomic's functions: a type's method leaves an inline NOP
}

// plainOpsAll are the opcodes siw sends, as bits: PutPlain's when the
// owner allows them.
const plainOpsAll = 1<<abi.IB_UVERBS_WR_RDMA_WRITE | 1<<abi.IB_UVERBS_WR_RDMA_READ |
	1<<abi.IB_UVERBS_WR_SEND | 1<<abi.IB_UVERBS_WR_SEND_WITH_INV

// SetPlainOps sets the opcodes, as bits, that PutPlain may take without
// checks beyond its own; the others it leaves to Put and the caller.
func (q *sendQueue) SetPlainOps(ops uint32) { atomic.StoreUint32(&q.plainOps, ops&plainOpsAll) }

// sendFlagBits are the IB_SEND_* bits sendFlags maps: FENCE, SIGNALED,
// SOLICITED (bits 0 to 2).
const sendFlagBits = abi.IB_SEND_FENCE | abi.IB_SEND_SIGNALED | abi.IB_SEND_SOLICITED

// sendFlags maps the sendFlagBits of a request to the flags of its
// element, SIW_WQE_VALID included (libsiw's map_send_flags), one load
// instead of a test and a branch per bit.
var sendFlags = func() (t [sendFlagBits + 1]uint32) {
	for f := range t {
		t[f] = abi.SIW_WQE_VALID
		if f&abi.IB_SEND_SIGNALED != 0 {
			t[f] |= abi.SIW_WQE_SIGNALLED
		}
		if f&abi.IB_SEND_SOLICITED != 0 {
			t[f] |= abi.SIW_WQE_SOLICITED
		}
		if f&abi.IB_SEND_FENCE != 0 {
			t[f] |= abi.SIW_WQE_READ_FENCE
		}
	}
	return t
}()

// PutPlain puts the caller's batch wrs as Put does, one after the other
// in one loop, up to the first request it leaves to the caller: one whose
// opcode is not plain (SetPlainOps), with a flag other than fence,
// signaled and solicited, with more SGEs than the QP takes, or an RDMA
// read with other than one SGE or fenced, or that finds the ring full:
// it refuses nothing, Put does. If it stopped at one, err is
// provider.ErrStop; else it then flushes, and err is Flush's error. It
// returns how many it put. A batch of common requests costs one call:
// the per-request call is most of what a request costs beyond writing
// its element. It serves batches only: a flag for one request of Put's,
// tested in the loop, cost every request instructions. putAny, Put's path, writes the same bytes for
// these requests (TestSQPutPlain).
//
//go:nosplit
func (q *sendQueue) PutPlain(wrs []provider.SendWR) (n int, err error) {
	// No stack check (nosplit): docs/architecture.md, The data path.
	ops := atomic.LoadUint32(&q.plainOps)
	for ; n < len(wrs); n++ {
		wr := &wrs[n]
		op := wr.Opcode
		if op >= 32 || ops>>op&1 == 0 || wr.Flags&^sendFlagBits != 0 || len(wr.SGE) > q.maxSGE ||
			op == abi.IB_UVERBS_WR_RDMA_READ && (len(wr.SGE) != 1 || wr.Flags&abi.IB_SEND_FENCE != 0) {
			return n, provider.ErrStop
		}
		off := int(q.put) * sqeSize
		e := q.buf[off : off+sqeSize]
		word := wordAt(e, 0)
		if word.Load()&abi.SIW_WQE_VALID != 0 {
			return n, provider.ErrStop // Put refuses it
		}
		sqe := mem.At[abi.SiwSQE](e, 0)
		sqe.ID = wr.ID
		var opcode uint8
		switch op {
		case abi.IB_UVERBS_WR_RDMA_WRITE:
			opcode, sqe.RKey, sqe.RAddr = abi.SIW_OP_WRITE, wr.RKey, wr.RemoteAddr
		case abi.IB_UVERBS_WR_RDMA_READ:
			opcode, sqe.RKey, sqe.RAddr = abi.SIW_OP_READ, wr.RKey, wr.RemoteAddr
		case abi.IB_UVERBS_WR_SEND:
			opcode, sqe.RKey, sqe.RAddr = abi.SIW_OP_SEND, 0, 0
		default: // IB_UVERBS_WR_SEND_WITH_INV
			opcode, sqe.RKey, sqe.RAddr = abi.SIW_OP_SEND_REMOTE_INV, wr.Imm, 0
		}
		sges := sqe.SGE[:len(wr.SGE)] // maxSGE is at most SIW_MAX_SGE
		for i := range sges {
			s := &wr.SGE[i]
			sges[i] = abi.SiwSGE{LAddr: s.Addr, Length: s.Length, LKey: s.LKey}
		}
		// Sequentially consistent, as putAny's (see there).
		word.Store(sendFlags[wr.Flags] | uint32(len(sges))<<16 | uint32(opcode)<<24)
		q.advance()
	}
	if q.pending != 0 {
		err = q.Flush()
	}
	return n, err
}

// Put puts one request, through the general path: uverbs sends the
// common ones through PutPlain.
func (q *sendQueue) Put(wr *provider.SendWR) error { return q.putAny(wr) }

// putAny is Put's general path: every opcode, inline data, and the
// refusals. The element's valid flag is checked first, as libsiw does.
//
//go:noinline
func (q *sendQueue) putAny(wr *provider.SendWR) error {
	// One bounds check for the element; the views below are then
	// within its constant size.
	off := int(q.put) * sqeSize
	e := q.buf[off : off+sqeSize]
	word := wordAt(e, 0)
	if word.Load()&abi.SIW_WQE_VALID != 0 {
		return provider.ErrFull
	}

	var opcode uint8
	rdma := false // carries raddr and rkey
	switch wr.Opcode {
	case abi.IB_UVERBS_WR_RDMA_WRITE:
		opcode, rdma = abi.SIW_OP_WRITE, true
	case abi.IB_UVERBS_WR_RDMA_READ:
		opcode, rdma = abi.SIW_OP_READ, true
	case abi.IB_UVERBS_WR_SEND:
		opcode = abi.SIW_OP_SEND
	case abi.IB_UVERBS_WR_SEND_WITH_INV:
		opcode = abi.SIW_OP_SEND_REMOTE_INV
	default:
		// The kernel's transmit path (siw_qp_prepare_tx) has no
		// immediate data and no atomics; local invalidate and memory
		// registration through a user SQ are not in rdma-core either,
		// and siw has neither RDMA FLUSH nor ATOMIC WRITE (Linux 6.12).
		return fmt.Errorf("siw: send opcode %d: %w", wr.Opcode, provider.ErrUnsupported)
	}

	// The element's flags but INLINE, which is set below with the data.
	flags := sendFlags[wr.Flags&sendFlagBits]
	if flags&abi.SIW_WQE_READ_FENCE != 0 && opcode == abi.SIW_OP_READ {
		// siw_activate_tx_from_sq fails a fenced READ and leaves it
		// valid at the head of the ring, where it blocks the SQ.
		return fmt.Errorf("siw: fenced RDMA READ: %w", provider.ErrUnsupported)
	}

	sqe := mem.At[abi.SiwSQE](e, 0)
	sqe.ID = wr.ID
	sqe.RKey, sqe.RAddr = 0, 0
	switch {
	case rdma:
		sqe.RKey, sqe.RAddr = wr.RKey, wr.RemoteAddr
	case opcode == abi.SIW_OP_SEND_REMOTE_INV:
		sqe.RKey = wr.Imm // the STag the peer invalidates
	}
	// Only the SGEs in use are written, as libsiw's push_send_wqe writes
	// them: the kernel copies num_sge entries (siw_activate_tx_from_sq),
	// or for inline data only sge[0].length, so the rest keep what the
	// element held, as under libsiw.

	var numSGE uint32
	if wr.Flags&abi.IB_SEND_INLINE != 0 {
		// siw_activate_tx_from_sq takes inline data with SEND and
		// WRITE only, and fails anything else in a way that blocks the
		// SQ.
		if opcode != abi.SIW_OP_SEND && opcode != abi.SIW_OP_WRITE {
			return fmt.Errorf("siw: inline data with send opcode %d: %w", wr.Opcode, provider.ErrUnsupported)
		}
		n, err := q.copyInline(off, wr.SGE)
		if err != nil {
			return err
		}
		sqe.SGE[0].Length = n
		flags |= abi.SIW_WQE_INLINE
		// num_sge counts the pieces the data came from, as rdma-core's
		// push_send_wqe writes it (a byte). The kernel does not read it
		// for inline data: siw_activate_tx sets 1 in its own copy.
		numSGE = uint32(uint8(len(wr.SGE)))
	} else {
		if len(wr.SGE) > q.maxSGE {
			return fmt.Errorf("siw: send request with %d SGEs, the QP takes %d: %w", len(wr.SGE), q.maxSGE, provider.ErrInvalid)
		}
		// iWARP reads into one sink buffer (RFC 5040 RDMA Read Request
		// has a single sink STag); the kernel would use sge[0] only.
		if opcode == abi.SIW_OP_READ && len(wr.SGE) != 1 {
			return fmt.Errorf("siw: RDMA READ with %d SGEs, iWARP takes exactly one: %w", len(wr.SGE), provider.ErrUnsupported)
		}
		sges := sqe.SGE[:len(wr.SGE)] // maxSGE is at most SIW_MAX_SGE
		for i := range sges {
			s := &wr.SGE[i]
			sges[i] = abi.SiwSGE{LAddr: s.Addr, Length: s.Length, LKey: s.LKey}
		}
		numSGE = uint32(len(wr.SGE))
	}

	// Publish: flags, num_sge and opcode in one store, after the body.
	// Sequentially consistent, not mem.StoreRelease: Flush then loads the
	// previous element's flag to decide whether the kernel's transmit
	// loop may be idle, and a release store could be passed by that load
	// (store-load order), leaving this element in the ring unannounced.
	word.Store(flags | numSGE<<16 | uint32(opcode)<<24)
	q.advance()
	return nil
}

// advance counts the element just put: the batch's first, its length,
// the next slot.
func (q *sendQueue) advance() {
	if q.pending == 0 {
		q.first = q.put
	}
	q.pending++
	q.put++
	if q.put == q.num {
		q.put = 0
	}
}

// copyInline copies the data the SGEs name into the element at off,
// from sge[1] on, and returns its length.
func (q *sendQueue) copyInline(off int, sges []provider.SGE) (uint32, error) {
	dst := q.buf[off+sqeInline : off+sqeEnd]
	n := 0
	for _, s := range sges {
		if s.Length == 0 {
			continue
		}
		if uint64(n)+uint64(s.Length) > abi.SIW_MAX_INLINE {
			return 0, fmt.Errorf("siw: more than %d bytes of inline data: %w", abi.SIW_MAX_INLINE, provider.ErrInvalid)
		}
		n += copy(dst[n:], mem.User(s.Addr, int(s.Length)))
	}
	return uint32(n), nil
}

// Flush rings the doorbell as rdma-core's siw_post_send does: only if the
// element before the first new one has been taken by the kernel, or if
// the batch went round the whole ring (see the package comment).
func (q *sendQueue) Flush() error {
	if q.pending == 0 {
		return nil
	}
	n, first := q.pending, q.first
	q.pending = 0
	if n < q.num && !q.mustRing {
		prev := first
		if prev == 0 {
			prev = q.num
		}
		prev--
		if wordAt(q.buf, int(prev)*sqeSize).Load()&abi.SIW_WQE_VALID != 0 {
			return nil
		}
	}
	if err := q.dev.Doorbell(q.handle); err != nil {
		// The elements stay in the ring; without this the next Flush
		// would find the one before it valid and never ring.
		q.mustRing = true
		return fmt.Errorf("siw: send doorbell: %w", err)
	}
	q.mustRing = false
	return nil
}

// Idle reports whether the kernel has taken the last element handed to
// it: siw takes elements in order and clears an element's valid flag when
// it moves it into its transmit context (siw_activate_tx_from_sq), which
// for a user QP happens in the doorbell's system call.
func (q *sendQueue) Idle() bool {
	if q.buf == nil {
		return true
	}
	last := q.put
	if last == 0 {
		last = q.num
	}
	last--
	return wordAt(q.buf, int(last)*sqeSize).Load()&abi.SIW_WQE_VALID == 0
}

func (q *sendQueue) Close() error { return unmap(q.dev, &q.buf) }

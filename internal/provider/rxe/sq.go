package rxe

import (
	"fmt"
	"sync/atomic"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// SQ is the driver's send queue as a type uverbs names: its Put,
// reached through a type switch rather than the provider interface, reads
// the caller's own request, which an interface call would make escape.
type SQ = sq

// sq is a send queue of struct rxe_send_wqe.
type sq struct {
	q         queue
	init      provider.QPInit
	pending   uint32 // producer including unflushed Puts
	published uint32 // producer the kernel has seen
	// ssn numbers the requests as rdma-core's init_send_wqe does: from 0,
	// counting also a valid request the full ring refused, which
	// rdma-core numbers before it finds the ring full. The kernel does
	// not read it from a user's ring; it is written so that the ring
	// holds the same bytes as under rdma-core (docs/conformance.md).
	ssn uint32
	// plainSGE is the most SGEs Put's straight path takes: the QP's
	// max_send_sge, and what fits the slot, on RC and UC; -1 on other
	// QPs and once closed, which sends every request to put.
	plainSGE int
	// plainOps are the opcodes PutPlain takes, as bits: the straight
	// path's that the QP's owner takes without further checks
	// (SetPlainOps). Atomic: the owner changes them with the QP's
	// attributes, while requests may be posted.
	plainOps uint32 // used through sync/atomic's functions: a type's method leaves an inline NOP
}

// SetPlainOps sets the opcodes, as bits, that PutPlain may take without
// checks beyond its own; the others it leaves to Put and the caller.
func (s *sq) SetPlainOps(ops uint32) { atomic.StoreUint32(&s.plainOps, ops&straightOps) }

// Put fills the next slot the way rdma-core's init_send_wqe does, but
// leaves it unpublished: put, the general path, for every request.
// uverbs sends the common requests through PutPlain, so Put sees the
// others (inline data, atomics, UD, memory windows, flushes, atomic
// writes, and the requests PutPlain leaves to it, which Put may refuse);
// TestSQPutPlainBatch compares PutPlain with it.
func (s *sq) Put(wr *provider.SendWR) error { return s.put(wr) }

// plainFlags are the send flags of PutPlain's requests.
const plainFlags = abi.IB_SEND_FENCE | abi.IB_SEND_SIGNALED | abi.IB_SEND_SOLICITED

// straightOps are the opcodes of PutPlain's straight path, as bits.
const straightOps = 1<<abi.IB_UVERBS_WR_RDMA_WRITE | 1<<abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM |
	1<<abi.IB_UVERBS_WR_SEND | 1<<abi.IB_UVERBS_WR_SEND_WITH_IMM | 1<<abi.IB_UVERBS_WR_RDMA_READ

// PutPlain puts the caller's batch wrs as Put does, one after the other
// in one loop, up to the first request it leaves to the caller: one whose
// opcode is not plain (SetPlainOps), with a flag other than fence,
// signaled and solicited, with more SGEs than the straight path takes,
// or of more than 2 GiB, or that finds the ring full: it refuses nothing,
// Put does. If it stopped at one, err is provider.ErrStop; else it
// then flushes as Flush does, and err is the doorbell's failure. It returns how many it put. A batch of
// common requests costs one call: the per-request call is most of what a
// request costs beyond writing its slot. It serves batches only: a flag
// for one request of Put's, tested in the loop, cost every request four
// instructions.
//
//go:nosplit
func (s *sq) PutPlain(wrs []provider.SendWR) (n int, err error) {
	// No stack check (nosplit): docs/architecture.md, The data path.
	ops := atomic.LoadUint32(&s.plainOps)
	maxSGE := s.plainSGE
	for ; n < len(wrs); n++ {
		wr := &wrs[n]
		sges := wr.SGE
		op := wr.Opcode
		if op >= 32 || ops>>op&1 == 0 || wr.Flags&^plainFlags != 0 || len(sges) > maxSGE {
			return n, provider.ErrStop
		}
		var total uint64
		for i := range sges {
			total += uint64(sges[i].Length)
		}
		if total > 1<<31 {
			return n, provider.ErrStop // put refuses it
		}
		// take's body, written out (as off below is offset's): the
		// call, inlined, left an inline mark, a NOP, per request.
		p := s.pending
		if s.q.free == 0 && !s.q.reload(p) {
			return n, provider.ErrStop // Put refuses it
		}
		s.q.free--
		ssn := s.ssn
		s.ssn++
		// The slot is found by its offset, not through q.slot: mem.At
		// checks the header against the mapping, and the SGEs are
		// checked below.
		off := queueHdr + int(p*s.q.size)
		w := mem.At[abi.RxeSendWQE](s.q.buf, off)
		w.Wr.WrID = wr.ID
		w.Wr.Reserved = 0
		w.Wr.Opcode = op
		w.Wr.SendFlags = wr.Flags
		w.Wr.Ex = 0
		if op == abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM || op == abi.IB_UVERBS_WR_SEND_WITH_IMM {
			w.Wr.Ex = beSwap(wr.Imm) // imm_data is __be32
		}
		w.Wr.Wr = [len(w.Wr.Wr)]byte{}
		w.Iova = 0
		if op != abi.IB_UVERBS_WR_SEND && op != abi.IB_UVERBS_WR_SEND_WITH_IMM {
			u := mem.At[abi.RxeSendWrRDMA](w.Wr.Wr[:], 0)
			u.RemoteAddr = wr.RemoteAddr
			u.RKey = wr.RKey
			w.Iova = wr.RemoteAddr
		}
		w.State = 0 // posted
		w.SSN = ssn
		w.Dma.Length = uint32(total)
		w.Dma.Resid = uint32(total)
		w.Dma.CurSGE = 0
		w.Dma.NumSGE = uint32(len(sges))
		w.Dma.SGEOffset = 0
		// plainSGE SGEs fit the slot (mapQP).
		off += sendWQEHdr
		for i := range sges {
			*mem.At[abi.RxeSGE](s.q.buf, off+i*sgeSize) = abi.RxeSGE(sges[i])
		}
		s.pending = s.q.next(p)
	}
	if s.pending != s.published {
		err = s.publish()
	}
	return n, err
}

// put is Put's general path: every opcode, inline data, UD. It fills the
// next slot the way rdma-core's init_send_wqe does, but leaves it
// unpublished. The checks come first so that a refused request leaves the
// slot alone.
//
//go:noinline
func (s *sq) put(wr *provider.SendWR) error {
	if s.q.buf == nil {
		return errClosed
	}
	room := s.q.elemSize() - sendWQEHdr
	n := len(wr.SGE)
	var total uint64
	for i := range wr.SGE {
		total += uint64(wr.SGE[i].Length)
	}
	inline := wr.Flags&abi.IB_SEND_INLINE != 0
	if inline {
		if total > uint64(s.init.MaxInline) || total > uint64(room) {
			return s.tooMuchInline(total, room)
		}
	} else if uint64(n) > uint64(s.init.MaxSendSGE) || n*sgeSize > room {
		return s.tooManySGEs(n)
	}
	if total > 1<<31 {
		return fmt.Errorf("rxe: send request of %d bytes: %w", total, provider.ErrInvalid)
	}
	switch wr.Opcode {
	case abi.IB_UVERBS_WR_RDMA_WRITE, abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM,
		abi.IB_UVERBS_WR_RDMA_READ,
		abi.IB_UVERBS_WR_SEND, abi.IB_UVERBS_WR_SEND_WITH_IMM,
		abi.IB_UVERBS_WR_SEND_WITH_INV, abi.IB_UVERBS_WR_LOCAL_INV:
	case abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		// As rdma-core's validate_send_wr: room for the 8-byte
		// original value, and an aligned target.
		if total < 8 || wr.RemoteAddr&7 != 0 {
			return fmt.Errorf("rxe: atomic to %#x with %d bytes of local buffer: %w", wr.RemoteAddr, total, provider.ErrInvalid)
		}
	case abi.IB_UVERBS_WR_FLUSH, abi.IB_UVERBS_WR_ATOMIC_WRITE:
		// Linux 6.2 and later; the caller has checked the device's
		// capability bits. Neither carries SGEs: a flush moves no
		// data, and an atomic write carries its 8 bytes in the WQE.
		if n != 0 {
			return fmt.Errorf("rxe: send opcode %d with %d SGEs: %w", wr.Opcode, n, provider.ErrInvalid)
		}
	case abi.IB_UVERBS_WR_BIND_MW:
		// As rdma-core's validate_send_wr: no data.
		if n != 0 || inline {
			return fmt.Errorf("rxe: memory window bind with %d SGEs: %w", n, provider.ErrInvalid)
		}
	default:
		// The rest rxe does not implement.
		return fmt.Errorf("rxe: send opcode %d: %w", wr.Opcode, provider.ErrUnsupported)
	}
	ud := s.init.Type == abi.IB_UVERBS_QPT_UD &&
		(wr.Opcode == abi.IB_UVERBS_WR_SEND || wr.Opcode == abi.IB_UVERBS_WR_SEND_WITH_IMM)
	if ud && (wr.AH == nil || wr.AH.Num == 0) {
		// Kernels before 5.16 want an address vector in the WQE
		// instead; they are not supported.
		return fmt.Errorf("rxe: UD send without an address handle number: %w", provider.ErrInvalid)
	}
	ssn := s.ssn
	s.ssn++
	if !s.q.take(s.pending) {
		return provider.ErrFull
	}
	next := s.q.next(s.pending)

	b := s.q.slot(s.pending)
	w := mem.At[abi.RxeSendWQE](b, 0)
	// librxe's convert_send_wr clears the rxe_send_wr and no more of
	// the slot; the rest of what it writes follows, field by field (see
	// the package comment for what stays stale).
	w.Wr = abi.RxeSendWr{}
	w.Iova = 0
	w.Wr.WrID = wr.ID
	w.Wr.Opcode = wr.Opcode
	w.Wr.SendFlags = wr.Flags
	switch wr.Opcode {
	case abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, abi.IB_UVERBS_WR_SEND_WITH_IMM:
		w.Wr.Ex = beSwap(wr.Imm) // imm_data is __be32
	case abi.IB_UVERBS_WR_SEND_WITH_INV, abi.IB_UVERBS_WR_LOCAL_INV:
		w.Wr.Ex = wr.Imm // invalidate_rkey is host order
	}
	switch wr.Opcode {
	case abi.IB_UVERBS_WR_RDMA_WRITE, abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM,
		abi.IB_UVERBS_WR_RDMA_READ, abi.IB_UVERBS_WR_ATOMIC_WRITE:
		u := mem.At[abi.RxeSendWrRDMA](w.Wr.Wr[:], 0)
		u.RemoteAddr = wr.RemoteAddr
		u.RKey = wr.RKey
		w.Iova = wr.RemoteAddr
		if wr.Opcode == abi.IB_UVERBS_WR_ATOMIC_WRITE {
			// As rdma-core's wr_atomic_write: the address and rkey in
			// the rdma member (the kernel builds the RETH from it), the
			// value in dma.atomic_wr, where the SGEs would be.
			copy(b[sendWQEHdr:], wr.AtomicData[:])
		}
	case abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		u := mem.At[abi.RxeSendWrAtomic](w.Wr.Wr[:], 0)
		u.RemoteAddr = wr.RemoteAddr
		u.CompareAdd = wr.CompareAdd
		u.Swap = wr.Swap
		u.RKey = wr.RKey
		w.Iova = wr.RemoteAddr
	case abi.IB_UVERBS_WR_BIND_MW:
		// As rdma-core's convert_send_wr.
		u := mem.At[abi.RxeSendWrMW](w.Wr.Wr[:], 0)
		u.Addr = wr.BindAddr
		u.Length = wr.BindLength
		u.MRLKey = wr.BindLKey
		u.MWRKey = wr.MWRKey
		u.RKey = wr.RKey
		u.Access = wr.BindAccess
	case abi.IB_UVERBS_WR_FLUSH:
		// As rdma-core's wr_flush: the length goes to the DMA info,
		// where the kernel's requester reads it for the RETH, and
		// wr.flush.length stays zero.
		u := mem.At[abi.RxeSendWrFlush](w.Wr.Wr[:], 0)
		u.RemoteAddr = wr.RemoteAddr
		u.RKey = wr.RKey
		u.Type = wr.FlushType
		u.Level = wr.FlushLevel
		w.Iova = wr.RemoteAddr
	default:
		if ud {
			u := mem.At[abi.RxeSendWrUD](w.Wr.Wr[:], 0)
			u.RemoteQPN = wr.RemoteQPN
			u.RemoteQKey = wr.RemoteQKey
			u.AHNum = wr.AH.Num
		}
	}
	if inline {
		d := b[sendWQEHdr:]
		for i := range wr.SGE {
			d = d[copy(d, mem.User(wr.SGE[i].Addr, int(wr.SGE[i].Length))):]
		}
	} else {
		for i := range wr.SGE {
			*mem.At[abi.RxeSGE](b, sendWQEHdr+i*sgeSize) = abi.RxeSGE{
				Addr:   wr.SGE[i].Addr,
				Length: wr.SGE[i].Length,
				LKey:   wr.SGE[i].LKey,
			}
		}
	}
	switch wr.Opcode {
	case abi.IB_UVERBS_WR_FLUSH:
		total = uint64(wr.Length)
	case abi.IB_UVERBS_WR_ATOMIC_WRITE:
		total = uint64(len(wr.AtomicData))
	}
	w.State = 0 // posted
	w.SSN = ssn
	w.Dma.Length = uint32(total)
	w.Dma.Resid = uint32(total)
	w.Dma.CurSGE = 0
	w.Dma.NumSGE = uint32(n)
	w.Dma.SGEOffset = 0
	s.pending = next
	return nil
}

// setPlain sets plainSGE from the QP's type and limits and the slot size.
func (s *sq) setPlain() {
	s.plainSGE = -1
	if t := s.init.Type; t == abi.IB_UVERBS_QPT_RC || t == abi.IB_UVERBS_QPT_UC {
		s.plainSGE = int(min(s.init.MaxSendSGE, uint32((s.q.elemSize()-sendWQEHdr)/sgeSize)))
	}
}

func (s *sq) tooMuchInline(total uint64, room int) error {
	return fmt.Errorf("rxe: %d bytes of inline data, at most %d (slot room %d): %w",
		total, s.init.MaxInline, room, provider.ErrInvalid)
}

func (s *sq) tooManySGEs(n int) error {
	return fmt.Errorf("rxe: send request with %d SGEs, at most %d: %w", n, s.init.MaxSendSGE, provider.ErrInvalid)
}

// Flush publishes every slot Put since the last Flush with one release
// store and rings the doorbell once. If the doorbell fails the requests
// are still in the ring; the kernel runs them at the next doorbell.
func (s *sq) Flush() error {
	if s.pending == s.published {
		return nil
	}
	return s.publish()
}

// publish is Flush with slots to publish.
func (s *sq) publish() error {
	if s.q.buf == nil {
		return nil
	}
	mem.StoreRelease(s.q.prod, s.pending) // the WQEs are written
	s.published = s.pending
	return s.q.dev.Doorbell(s.init.Handle)
}

// Idle reports whether the kernel has moved the consumer index up to the
// last published slot. rxe's completer advances it when a request is
// done (acknowledged, for RC), signaled or not.
func (s *sq) Idle() bool { return s.q.buf == nil || s.q.cons.Load() == s.published }

func (s *sq) Close() error {
	s.plainSGE = -1
	return s.q.close()
}

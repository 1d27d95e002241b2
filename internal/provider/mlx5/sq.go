package mlx5

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
	"github.com/purerdma/purerdma/internal/provider/mmio"
)

// SQ is the driver's send queue as a type uverbs names: its Put,
// reached through a type switch rather than the provider interface, reads
// the caller's own request, which an interface call would make escape.
type SQ = sendQueue

// sendQueue is a QP's send queue (struct mlx5_wq as the SQ, and the parts
// of struct mlx5_qp that _mlx5_post_send keeps between requests). Put is
// one pass of _mlx5_post_send's loop and Flush is its post_send_db, so a
// batch of Puts and a Flush write what one ibv_post_send of the same list
// writes, byte for byte, including on a failing request.
type sendQueue struct {
	qp      *qp
	off     int // of the queue in qp.buf: after the receive queue
	wqeCnt  uint32
	maxPost uint32
	maxGS   int
	wrid    []uint64
	wqeHead []uint32 // per WQE, the head before it: its completion sets tail past it

	head    atomic.Uint32 // WRs handed to the device (Flush)
	tail    atomic.Uint32 // WRs the device is done with (Poll)
	curPost uint32        // 64-byte blocks used
	pending uint32        // WRs Put since the last Flush

	// fence is the fence the next request gets without asking
	// (libmlx5's fm_cache): a memory window bind sets it for the next.
	// Whoever sets or clears it calls setFast.
	fence   uint8
	sigBits uint8 // ctrlCQUpdate when every request is signaled
	ud      bool  // the QP is UD: every send needs an address handle
	// blocked is q.gone || q.stateKnown && !q.sendReady, kept by
	// closeHalf and Modified (under both of the QP's locks), so that
	// Put's check of the QP's state is one load.
	blocked bool
	fmCESE  [fmFlags + 1]uint8 // fm_ce_se by send flags (setFMCESE)
	// fast describes, by IB_UVERBS_WR_*, the requests Put writes
	// straight (setFast); base is the queue's first byte, &qp.buf[off],
	// which Put and Flush write and read through without bounds checks;
	// qpn8 is the QP number where the control segment has it.
	fast [16]fastOp
	base unsafe.Pointer
	qpn8 uint32
	// dbSend is the doorbell record's send counter, which Flush writes.
	dbSend *uint32
	// plainOps are the opcodes PutPlain takes, as bits, if the straight
	// path takes them too: those the QP's owner takes without further
	// checks (SetPlainOps). Atomic: the owner changes them with the
	// QP's attributes, while requests may be posted.
	plainOps atomic.Uint32

	// What post_send_db rings with: whether the batch had inline data,
	// and the control segment and size (in 16-byte units) of the last
	// request Put wrote to, even one that failed half-way.
	inl      bool
	lastCtrl int
	lastSize int
}

// mlx5Opcode maps IB_UVERBS_WR_* to the device's opcodes (mlx5_ib_opcode);
// an opcode past its end is refused, as libmlx5 refuses it.
var mlx5Opcode = [...]uint8{
	abi.IB_UVERBS_WR_SEND:                 opSend,
	abi.IB_UVERBS_WR_SEND_WITH_INV:        opSendInval,
	abi.IB_UVERBS_WR_SEND_WITH_IMM:        opSendImm,
	abi.IB_UVERBS_WR_RDMA_WRITE:           opRDMAWrite,
	abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:  opRDMAWriteImm,
	abi.IB_UVERBS_WR_RDMA_READ:            opRDMARead,
	abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:   opAtomicCS,
	abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD: opAtomicFA,
	abi.IB_UVERBS_WR_BIND_MW:              opUMR,
	abi.IB_UVERBS_WR_LOCAL_INV:            opUMR,
	abi.IB_UVERBS_WR_TSO:                  opTSO,
	abi.IB_UVERBS_WR_RDMA_READ_WITH_INV:   opUMR, // IBV_WR_DRIVER1 in libibverbs
}

// The send queue's errors, made once: Put allocates nothing.
var (
	errSQFull     = fmt.Errorf("mlx5: send queue full: %w", provider.ErrFull)
	errSQOpcode   = fmt.Errorf("mlx5: send opcode: %w", provider.ErrInvalid)
	errSQState    = fmt.Errorf("mlx5: send on a QP not yet in RTS: %w", provider.ErrInvalid)
	errSQSGEs     = fmt.Errorf("mlx5: more SGEs than the send queue takes: %w", provider.ErrInvalid)
	errSQInline   = fmt.Errorf("mlx5: more inline data than the send queue takes: %w", provider.ErrInvalid)
	errSQMW       = fmt.Errorf("mlx5: memory windows: %w", provider.ErrUnsupported)
	errSQNoAH     = fmt.Errorf("mlx5: UD send without an address handle: %w", provider.ErrInvalid)
	errSQTSO      = fmt.Errorf("mlx5: TSO data on a QP without TSO: %w", provider.ErrInvalid)
	errSQClosed   = fmt.Errorf("mlx5: send queue: %w", provider.ErrClosed)
	errNoDoorbell = fmt.Errorf("mlx5: the QP has no doorbell register: %w", provider.ErrClosed)
)

// end is the offset just past the send queue in qp.buf (libmlx5's qend).
func (s *sendQueue) end() int { return s.off + int(s.wqeCnt)<<sendWQEShift }

// acquire pairs with Flush's store of head, as recvQueue.acquire.
func (s *sendQueue) acquire() { s.head.Load() }

// Put writes wr as the next WQE, through put, the general path: uverbs
// sends the common requests through PutPlain, so Put sees the rest (and
// the requests PutPlain leaves to it, which Put may refuse).
func (s *sendQueue) Put(wr *provider.SendWR) error { return s.put(wr) }

// SetPlainOps sets the opcodes, as bits, that PutPlain may take without
// checks beyond its own; the others it leaves to Put and the caller.
func (s *sendQueue) SetPlainOps(ops uint32) { s.plainOps.Store(ops) }

// plainFlags are the send flags of the straight path's requests.
const plainFlags = abi.IB_SEND_FENCE | abi.IB_SEND_SIGNALED | abi.IB_SEND_SOLICITED

// PutPlain puts the caller's batch wrs as Put does, one after the other
// in one loop, up to the first request it leaves to the caller: one whose
// opcode is not plain (SetPlainOps) or not for the straight path, with a
// flag other than fence, signaled and solicited, with more SGEs than the
// QP takes, or that finds the queue full: it refuses nothing, Put does.
// If it stopped at one, err is provider.ErrStop; else it then flushes,
// and err is Flush's error.
// It returns how many it put. A batch of common requests costs one call:
// the per-request call is most of what a request costs beyond writing
// its WQE. It serves batches only: a flag for one request of Put's,
// tested in the loop, cost every request instructions.
//
// It checks each condition once, each a load or two: the QP's state, the
// opcode's kind and a pending fence are all in the table s.fast (setFast
// empties it when the state forbids sends). Once they pass no step can
// refuse the request, so the control segment is written in two 8-byte
// stores at once rather than in libmlx5's order (which only shows when a
// request is refused half-way), and each segment in two, through s.base
// without bounds checks: the SGE count was checked, so the WQE fits its
// slot, and each segment wraps at the end of the queue. The bytes and the
// queue's state are put's (TestPutFast, and the conformance scripts
// against libmlx5).
func (s *sendQueue) PutPlain(wrs []provider.SendWR) (n int, err error) {
	ops := s.plainOps.Load()
	for ; n < len(wrs); n++ {
		wr := &wrs[n]
		op := wr.Opcode
		if op >= uint32(len(s.fast)) || ops>>op&1 == 0 {
			return n, provider.ErrStop
		}
		e := &s.fast[op]
		next := s.head.Load() + s.pending
		if e.opcode == 0 || wr.Flags&^plainFlags != 0 || len(wr.SGE) > s.maxGS || next-s.tail.Load() >= s.maxPost {
			return n, provider.ErrStop
		}
		// The bookkeeping first and the control segment's words
		// computed before the data: fewer values live across the SGE
		// loop.
		base := s.base
		cur := s.curPost
		idx := cur & (s.wqeCnt - 1)
		// idx < wqeCnt, the length of both arrays: no bounds check.
		*(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s.wrid)), uintptr(idx)*8)) = wr.ID
		*(*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s.wqeHead)), uintptr(idx)*4)) = next
		s.pending++
		off := uintptr(idx) << sendWQEShift
		s.lastCtrl = s.off + int(off)
		// signature and dci_stream_channel_id 0, fm_ce_se, imm.
		storeBE64(unsafe.Add(base, off+8), uint64(s.fmCESE[wr.Flags&fmFlags])<<32|uint64(wr.Imm&e.imm))
		// opcode, WQE counter, QP number; the size is added below.
		hi := uint64((cur&0xffff)<<8|uint32(e.opcode))<<32 | uint64(s.qpn8)
		seg, size := off+segSize, uint32(1)
		if e.raddr {
			storeBE64(unsafe.Add(base, seg), wr.RemoteAddr)
			storeBE64(unsafe.Add(base, seg+8), uint64(wr.RKey)<<32)
			seg, size = seg+segSize, 2
		}
		qend := uintptr(s.wqeCnt) << sendWQEShift
		// A local copy: the stores through base could alias wr as far
		// as the compiler knows, and would make it reload the slice
		// each pass.
		sges := wr.SGE
		for i := range sges {
			sg := &sges[i]
			if seg == qend {
				seg = 0
			}
			if sg.Length == 0 {
				continue
			}
			storeBE64(unsafe.Add(base, seg), uint64(sg.Length)<<32|uint64(sg.LKey))
			storeBE64(unsafe.Add(base, seg+8), sg.Addr)
			seg += segSize
			size++
		}
		storeBE64(unsafe.Add(base, off), hi|uint64(size))
		s.lastSize = int(size)
		s.curPost = cur + (size+sendWQEBB/segSize-1)/(sendWQEBB/segSize)
	}
	if s.pending != 0 {
		err = s.Flush()
	}
	return n, err
}

// put is Put for any request: the control segment, the remote address
// and atomic segments of RDMA and atomic requests (RC, UC), the datagram
// segment of UD sends, then the data as inline data or data segments,
// wrapping to the start of the queue where it runs past the end. It
// checks, and writes, in the order _mlx5_post_send does, so that a request
// refused half-way leaves the same bytes behind: the checks come before
// any write; the control segment's first words, the transport
// segment and the data come next, and a refusal there (too much inline
// data, TSO data) leaves them; the opcode, size and wr_id come last.
func (s *sendQueue) put(wr *provider.SendWR) error {
	// The checks of _mlx5_post_send, before any write, as one condition
	// here; refusal finds which failed, in libmlx5's order.
	// The tail moves under a concurrent Poll: read it once, so that
	// refusal sees the queue as full as the check did.
	full := s.head.Load()-s.tail.Load()+s.pending >= s.maxPost
	if s.blocked || int(wr.Opcode) >= len(mlx5Opcode) || full || len(wr.SGE) > s.maxGS ||
		wr.Opcode == abi.IB_UVERBS_WR_BIND_MW || wr.Opcode == abi.IB_UVERBS_WR_LOCAL_INV || wr.AH == nil && s.ud {
		return s.refusal(wr, full)
	}
	idx := s.curPost & (s.wqeCnt - 1)
	ctrlOff := s.off + int(idx)<<sendWQEShift
	s.lastCtrl = ctrlOff
	ctrl := mem.At[ctrlSeg](s.qp.buf, ctrlOff)
	s.startCtrl(wr, ctrl)
	seg, size := s.putTransport(wr, ctrlOff+segSize)
	size, err := s.putData(wr, seg, size)
	s.lastSize = size
	if err != nil {
		return err
	}
	s.finishCtrl(wr, ctrl, idx, size)
	return nil
}

// fastOp is what Put's straight path needs of an opcode on this QP
// (sendQueue.fast).
type fastOp struct {
	imm    uint32 // ^0 where the control segment carries wr.Imm (send_ieth), else 0
	opcode uint8  // the device's; 0: not for the straight path
	raddr  bool   // a remote address segment follows the control segment
}

// storeBE64 stores v big-endian at p, as one store.
func storeBE64(p unsafe.Pointer, v uint64) { *(*uint64)(p) = bits.ReverseBytes64(v) }

// setFast fills the QP's table of the requests Put writes straight: those
// whose WQE, on this QP's type, is the control segment, the remote
// address segment or not (as putTransport writes it), and data segments.
// The table is empty while the QP takes no sends (blocked) and while a
// fence is pending (the straight path does not read it), so that Put
// checks both in its one load of the table: every change of either calls
// it.
func (s *sendQueue) setFast() {
	s.fast = [len(s.fast)]fastOp{}
	s.qpn8 = s.qp.qpn << 8
	if s.blocked || s.fence != 0 || s.base == nil {
		return
	}
	var ops []uint32
	switch s.qp.typ {
	case abi.IB_UVERBS_QPT_RC:
		ops = []uint32{abi.IB_UVERBS_WR_RDMA_WRITE, abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, abi.IB_UVERBS_WR_RDMA_READ}
	case abi.IB_UVERBS_QPT_UC:
		ops = []uint32{abi.IB_UVERBS_WR_RDMA_WRITE, abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM}
	default:
		return
	}
	for _, op := range ops {
		s.fast[op].raddr = true
	}
	ops = append(ops, abi.IB_UVERBS_WR_SEND, abi.IB_UVERBS_WR_SEND_WITH_IMM, abi.IB_UVERBS_WR_SEND_WITH_INV)
	for _, op := range ops {
		wr := provider.SendWR{Opcode: op, Imm: ^uint32(0)}
		s.fast[op].imm = sendImm(&wr)
		s.fast[op].opcode = mlx5Opcode[op]
	}
}

// refusal is the error of a request Put refuses before writing anything:
// the first check of _mlx5_post_send's that it fails.
func (s *sendQueue) refusal(wr *provider.SendWR, full bool) error {
	q := s.qp
	switch {
	case q.gone:
		return errSQClosed
	case int(wr.Opcode) >= len(mlx5Opcode):
		return errSQOpcode
	case full:
		return errSQFull
	case q.stateKnown && !q.sendReady:
		return errSQState
	case len(wr.SGE) > s.maxGS:
		return errSQSGEs
	case wr.Opcode == abi.IB_UVERBS_WR_BIND_MW, wr.Opcode == abi.IB_UVERBS_WR_LOCAL_INV:
		// libmlx5 builds a UMR WQE; not implemented.
		return errSQMW
	default: // a UD send without an address handle
		return errSQNoAH
	}
}

// startCtrl writes what libmlx5 writes of the control segment first: it
// clears the word of the signature and fm_ce_se, then sets the immediate
// and fm_ce_se (with the fence a bind left, unless wr asks for one).
func (s *sendQueue) startCtrl(wr *provider.SendWR, ctrl *ctrlSeg) {
	fm := s.fmCESE[wr.Flags&fmFlags]
	if s.fence != 0 {
		if wr.Flags&abi.IB_SEND_FENCE == 0 {
			fm |= s.fence
		}
		s.fence = 0
		s.setFast()
	}
	ctrl.signature = 0
	ctrl.dciStream = be16{}
	ctrl.fmCESE = 0
	ctrl.imm.set(sendImm(wr))
	ctrl.fmCESE = fm
}

// fmFlags are the send flags that set bits of fm_ce_se.
const fmFlags = abi.IB_SEND_FENCE | abi.IB_SEND_SIGNALED | abi.IB_SEND_SOLICITED

// setFMCESE fills the QP's table of fm_ce_se by send flags, a per-QP
// invariant of what _mlx5_post_send computes per request: the QP's
// signal-all bit, a fence, a completion, a solicited event.
func (s *sendQueue) setFMCESE() {
	for f := range s.fmCESE {
		fm := s.sigBits
		if f&abi.IB_SEND_FENCE != 0 {
			fm |= ctrlFence
		}
		if f&abi.IB_SEND_SIGNALED != 0 {
			fm |= ctrlCQUpdate
		}
		if f&abi.IB_SEND_SOLICITED != 0 {
			fm |= ctrlSolicited
		}
		s.fmCESE[f] = fm
	}
}

// putTransport writes the segments between the control segment and the
// data at seg: remote address (RDMA on RC and UC, atomics on RC), atomic
// (RC) or datagram (UD). It returns where the data goes and the WQE's size
// so far in 16-byte units.
func (s *sendQueue) putTransport(wr *provider.SendWR, seg int) (int, int) {
	q := s.qp
	switch q.typ {
	case abi.IB_UVERBS_QPT_RC:
		switch wr.Opcode {
		case abi.IB_UVERBS_WR_RDMA_READ, abi.IB_UVERBS_WR_RDMA_WRITE, abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
			setRaddrSeg(q.buf, seg, wr.RemoteAddr, wr.RKey)
			return seg + segSize, 2
		case abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
			setRaddrSeg(q.buf, seg, wr.RemoteAddr, wr.RKey)
			a := mem.At[atomicSeg](q.buf, seg+segSize)
			if wr.Opcode == abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP {
				a.swapAdd.set(wr.Swap)
				a.compare.set(wr.CompareAdd)
			} else {
				a.swapAdd.set(wr.CompareAdd)
			}
			return seg + 2*segSize, 3
		}
	case abi.IB_UVERBS_QPT_UC:
		switch wr.Opcode {
		case abi.IB_UVERBS_WR_RDMA_WRITE, abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
			setRaddrSeg(q.buf, seg, wr.RemoteAddr, wr.RKey)
			return seg + segSize, 2
		}
	case abi.IB_UVERBS_QPT_UD:
		d := mem.At[av](q.buf, seg)
		copy(q.buf[seg:seg+avSize], wr.AH.AV[:avSize])
		d.dqpDCT.set(wr.RemoteQPN | extendedUDAV)
		d.qkey.set(wr.RemoteQKey)
		seg += avSize
		if seg == s.end() {
			seg = s.off
		}
		return seg, 1 + avSize/segSize
	}
	return seg, 1
}

// putData writes wr's data at seg, as inline data or as data segments,
// and returns the WQE's size grown by it; on a refusal, the size before
// the data, which is what libmlx5 leaves for the doorbell.
func (s *sendQueue) putData(wr *provider.SendWR, seg, size int) (int, error) {
	if wr.Flags&abi.IB_SEND_INLINE != 0 && len(wr.SGE) != 0 {
		sz, ok := s.putInline(wr, seg, s.end())
		if !ok {
			return size, errSQInline
		}
		s.inl = true
		return size + sz, nil
	}
	q := s.qp
	// An atomic's data segment is the 8 bytes of the original value.
	atomic := q.typ == abi.IB_UVERBS_QPT_RC &&
		(wr.Opcode == abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP || wr.Opcode == abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD)
	qend := s.end()
	dp := seg
	for i := range wr.SGE {
		sg := &wr.SGE[i]
		if dp == qend {
			dp = s.off
		}
		if sg.Length == 0 {
			continue
		}
		length := sg.Length
		switch {
		case atomic:
			length = 8
		case wr.Opcode == abi.IB_UVERBS_WR_TSO:
			// Only raw packet QPs have a TSO budget; the rest
			// refuse any TSO data.
			return size, errSQTSO
		}
		setDataSeg(q.buf, dp, length, sg.LKey, sg.Addr)
		dp += segSize
		size++
	}
	return size, nil
}

// finishCtrl completes the control segment (opcode, WQE counter, size and
// QP number) and records the request's wr_id and place in the queue.
func (s *sendQueue) finishCtrl(wr *provider.SendWR, ctrl *ctrlSeg, idx uint32, size int) {
	ctrl.opmodIdxOpcode.set((s.curPost&0xffff)<<8 | uint32(mlx5Opcode[wr.Opcode]))
	ctrl.qpnDS.set(uint32(size) | s.qp.qpn<<8)
	s.record(wr.ID, idx, size)
}

// record keeps a written WQE's wr_id and place in the queue, and moves
// the queue past its size (16-byte units) in whole basic blocks.
func (s *sendQueue) record(id uint64, idx uint32, size int) {
	s.wrid[idx] = id
	s.wqeHead[idx] = s.head.Load() + s.pending
	s.curPost += uint32((size*segSize + sendWQEBB - 1) / sendWQEBB)
	s.pending++
}

// putInline copies the SGEs' bytes after an inline segment header at seg,
// wrapping at qend, and returns the segment's size in 16-byte units
// (set_data_inl_seg). It fails, having copied the SGEs before, at the
// first SGE that takes the total past the QP's inline size.
func (s *sendQueue) putInline(wr *provider.SendWR, seg, qend int) (int, bool) {
	q := s.qp
	wqe := seg + 4
	inl := 0
	for i := range wr.SGE {
		sg := &wr.SGE[i]
		n := int(sg.Length)
		inl += n
		if inl > q.maxInline {
			return 0, false
		}
		src := mem.User(sg.Addr, n)
		if wqe+n > qend {
			c := qend - wqe
			copy(q.buf[wqe:qend], src[:c])
			src = src[c:]
			n -= c
			wqe = s.off
		}
		copy(q.buf[wqe:wqe+n], src)
		wqe += n
	}
	if inl == 0 {
		return 0, true
	}
	putBE32(q.buf, seg, uint32(inl)|inlineSeg)
	return align(inl+4, segSize) / segSize, true
}

// sendImm is the control segment's immediate word (send_ieth): the
// immediate data, or the rkey a SEND_WITH_INV invalidates.
func sendImm(wr *provider.SendWR) uint32 {
	switch wr.Opcode {
	case abi.IB_UVERBS_WR_SEND_WITH_IMM, abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, abi.IB_UVERBS_WR_SEND_WITH_INV:
		return wr.Imm
	}
	return 0
}

func setRaddrSeg(buf []byte, off int, addr uint64, rkey uint32) {
	r := mem.At[raddrSeg](buf, off)
	r.raddr.set(addr)
	r.rkey.set(rkey)
	r.reserved = be32{}
}

// Flush hands the WQEs Put since the last Flush to the device and rings
// the doorbell once (post_send_db): the send counter in the doorbell
// record, then, on the QP's bfreg, either the whole last WQE as a
// BlueFlame write (a batch of one request of more than one segment that
// fits half the register) or its first 8 bytes as a doorbell write; then
// the bfreg's halves swap. Nothing when nothing was Put.
func (s *sendQueue) Flush() error {
	nreq := s.pending
	if nreq == 0 {
		return nil
	}
	q := s.qp
	bf := q.bf
	if bf == nil {
		return errNoDoorbell
	}
	mem.StoreRelease(&s.head, s.head.Load()+nreq)
	s.pending = 0
	// The WQEs before the doorbell record, the record before the
	// doorbell.
	mmio.ToDevice()
	*s.dbSend = bits.ReverseBytes32(s.curPost & 0xffff)
	if bf.needLock {
		bf.mu.Lock()
		mmio.LockedWCStart()
	} else {
		mmio.FlushWrites()
	}
	// The register and its halves were checked where they were mapped
	// (bfreg.setReg), the WQE where it was written.
	reg := unsafe.Add(bf.base, bf.offset)
	ctrl := uintptr(s.lastCtrl - s.off)
	if size := s.lastSize; nreq == 1 && (s.inl || preferBF) && size > 1 && size <= bf.bfMax {
		blocks := int(uint(size+sendWQEBB/segSize-1) / (sendWQEBB / segSize))
		if ctrl+uintptr(blocks)<<sendWQEShift <= uintptr(s.wqeCnt)<<sendWQEShift {
			mmio.CopyBlocks(reg, unsafe.Add(s.base, ctrl), blocks)
		} else {
			s.blueFlameWrap(reg, ctrl, blocks)
		}
	} else {
		mmio.Store64(reg, *(*uint64)(unsafe.Add(s.base, ctrl)))
	}
	// Out of the write-combining buffer before the next ring, and
	// before another CPU can take the register.
	mmio.FlushWrites()
	if bf.bufSize != 0 {
		// bfreg 0 has no halves, and QPs share it without a lock.
		bf.offset ^= bf.bufSize
	}
	if bf.needLock {
		bf.mu.Unlock()
	}
	s.inl = false
	return nil
}

// preferBF is libmlx5's prefer_bf without MLX5_POST_SEND_PREFER_BF: a
// BlueFlame write for any request that qualifies, not only inline ones.
const preferBF = true

// blueFlameWrap is the BlueFlame write of a WQE of blocks 64-byte blocks
// at ctrl (from the queue's start) that wraps at the end of the queue:
// two bursts (mlx5_bf_copy).
func (s *sendQueue) blueFlameWrap(reg unsafe.Pointer, ctrl uintptr, blocks int) {
	n := int(uintptr(s.wqeCnt) - ctrl>>sendWQEShift)
	mmio.CopyBlocks(reg, unsafe.Add(s.base, ctrl), n)
	mmio.CopyBlocks(unsafe.Add(reg, n*sendWQEBB), s.base, blocks-n)
}

// Idle reports whether every request handed to the device has completed,
// as far as the polled CQEs tell: an unsignaled request is known done only
// when a later one completes.
func (s *sendQueue) Idle() bool { return s.head.Load() == s.tail.Load() }

// Close closes the send half of the QP.
func (s *sendQueue) Close() error { return s.qp.closeHalf(true) }

// putBE32 stores a big-endian word, as one store.
func putBE32(b []byte, off int, v uint32) { binary.BigEndian.PutUint32(b[off:], v) }

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

// CQ is the driver's CQ as a type package cq names: its Poll, reached
// through a type switch rather than the provider.CQ interface, writes
// straight into the caller's completions, which an interface call would
// make escape.
type CQ = cq

// cq is a completion queue: a power-of-two ring of 64-byte CQEs in user
// memory that the device writes, and a doorbell record whose first word
// tells the device how far we have consumed and whose second records the
// last arm. A CQE is ours when its owner bit equals the wrap parity of the
// consumer index (libmlx5's struct mlx5_cq, the non-extended poll).
type cq struct {
	ctx *context

	// libmlx5's cq->lock is the public CQ's: every method runs under
	// it, and so does the cleaning of a QP's CQEs (qp.lockCQs), which
	// takes it through provider.QPInit's SendCQLock and RecvCQLock.
	buf  []byte
	mask uint32 // entries - 1: the kernel's cqe
	v1   bool   // CQE version 1: Poll's straight path applies (pollFast)
	db   dbrec
	cqn  uint32

	// What Arm writes, found once at creation: uar is in ctx.cqUAR.
	uar   *[8]byte // the CQ doorbell of ctx.cqUAR, nil without one
	armDB *uint32  // the doorbell record's second word, db.b[4:8]: one 32-bit store
	cqnDB uint64   // the doorbell's CQ number half, as Arm's native store writes it
	ciDB  *uint32  // its first word, db.b[0:4]: one 32-bit store, as armDB

	// consIndex and armSN are written and read under the CQ's lock
	// (Poll, Take, clean, Event, Arm); atomic, with release stores
	// (plain MOVs on amd64), so that a reader outside it would see whole
	// values.
	consIndex atomic.Uint32
	armSN     atomic.Uint32 // the arm sequence number modulo 4, in place: bits 28-29 of the arm word
	closed    bool
}

// Results of reading one CQE, as cq.c's.
const (
	cqOK      = 0
	cqEmpty   = -1
	cqPollErr = -2
	cqNoData  = 2 // ENOENT: a CQE the provider consumed itself
)

// CreateCQ allocates the ring of the next power of two above the size asked
// for and its doorbell record, and asks for that size less one, as
// libmlx5's create_cq: the ring always has one more entry than it holds.
func (c *context) CreateCQ(init *provider.CQInit, req []byte) (provider.Pending[provider.CQ], error) {
	if init.CQE == 0 || init.CQE > 1<<31-1 {
		return nil, fmt.Errorf("mlx5: CQ of %d entries: %w", init.CQE, provider.ErrInvalid)
	}
	n := roundupPow2(uint64(init.CQE) + 1)
	if n > 1<<24 {
		return nil, fmt.Errorf("mlx5: CQ of %d entries, the most is %d: %w", init.CQE, 1<<24-1, provider.ErrInvalid)
	}
	buf, err := mem.Alloc(int(n) * cqeSize)
	if err != nil {
		return nil, fmt.Errorf("mlx5: CQ buffer: %w", err)
	}
	for i := 0; i < int(n); i++ {
		buf[i*cqeSize+cqeSize-1] = cqeInvalid << 4
	}
	db, err := c.dbr.alloc()
	if err != nil {
		mem.Free(buf)
		return nil, err
	}
	clear(db.b)
	cmd := abi.MLX5CreateCQ{
		BufAddr: mem.Addr(buf),
		DBAddr:  db.addr(),
		CQESize: cqeSize,
	}
	if c.ncUAR != nil {
		cmd.Flags |= abi.MLX5_IB_CREATE_CQ_FLAGS_UAR_PAGE_INDEX
		cmd.UARPageIndex = uint16(c.ncUAR.pageID)
	}
	q := &cq{ctx: c, buf: buf, db: db, mask: uint32(n - 1), v1: c.cqeVersion == cqeVersionV1}
	if err := encode(req, &cmd, "CREATE_CQ"); err != nil {
		q.free()
		return nil, err
	}
	init.CQE = uint32(n - 1)
	return &pendingCQ{q: q, init: init}, nil
}

type pendingCQ struct {
	q    *cq
	init *provider.CQInit
}

// Finish takes the CQ number and the size the kernel granted, which is the
// mask libmlx5 indexes the ring with.
func (p *pendingCQ) Finish(resp []byte) (provider.CQ, error) {
	var r abi.MLX5CreateCQResp
	decode(resp, &r)
	g := uint64(p.init.Granted) + 1
	if g&(g-1) != 0 || g > uint64(p.q.mask)+1 {
		return nil, fmt.Errorf("mlx5: CREATE_CQ granted %d entries for a ring of %d: %w", p.init.Granted, p.q.mask+1, provider.ErrInvalid)
	}
	q := p.q
	q.mask = uint32(g - 1)
	q.cqn = r.CQN
	q.cqnDB = uint64(q.cqn) // the doorbell's low word, big-endian
	if littleEndian {
		q.cqnDB = uint64(bits.ReverseBytes32(q.cqn)) << 32
	}
	if u := q.ctx.cqUAR; u != nil {
		// A UAR page is page-aligned: the register is 8-byte aligned,
		// as mmio.Write64To needs.
		q.uar = (*[8]byte)(u[cqDoorbell:])
	}
	q.armDB = (*uint32)(unsafe.Pointer(&q.db.b[4*cqArmDB]))
	q.ciDB = (*uint32)(unsafe.Pointer(&q.db.b[4*cqSetCI]))
	return q, nil
}

func (p *pendingCQ) Abort() { p.q.free() }

// free releases the doorbell record and then the ring, in mlx5_destroy_cq's
// order.
func (q *cq) free() {
	q.ctx.freeMem(q.db, q.buf)
	q.db = dbrec{}
	q.buf = nil
}

// Close frees the doorbell record and the ring after the kernel CQ is
// gone. It runs under the CQ's lock, which Arm takes too
// (docs/concurrency.md, Arming under the lock).
func (q *cq) Close() error {
	if q.closed {
		return nil
	}
	q.closed = true
	q.uar = nil // the driver's own Arm's closed check (package cq's ReqNotify checks its drivers.arm, cleared first)
	q.free()
	return nil
}

// Resize is not implemented.
func (q *cq) Resize(resp []byte) error {
	return fmt.Errorf("mlx5: resize CQ: %w", provider.ErrUnsupported)
}

// swCQE returns the offset of the n'th CQE if software owns it
// (get_sw_cqe): a valid opcode and the owner bit of n's pass over the ring.
func (q *cq) swCQE(n uint32) (int, bool) {
	off := int(n&q.mask) * cqeSize
	return off, owned(q.buf[off+cqeSize-1], n, q.mask)
}

// owned reports whether a CQE whose last byte is op is software's at
// consumer index n of a ring of mask+1 entries: a valid opcode and the
// owner bit of n's pass over the ring.
func owned(op uint8, n, mask uint32) bool {
	// The opcode is the top nibble: below the invalid one's, compared
	// whole, without a shift. The owner bit, bit 0, is moved to n's pass
	// bit by a multiply by the ring's size, a power of two, and compared
	// there: two instructions fewer than comparing two booleans.
	size := mask + 1
	return op < cqeInvalid<<4 && (uint32(op)*size^n)&size == 0
}

// owned's multiply moves bit 0: the index is out of range, and the
// package does not build, if the owner bit is another.
var _ = [1]struct{}{}[cqeOwnerMask-1]

// next consumes the next CQE, if software owns it (mlx5_get_next_cqe).
func (q *cq) next() (int, bool) {
	ci := q.consIndex.Load()
	off, ok := q.swCQE(ci)
	if !ok {
		return 0, false
	}
	mem.StoreRelease(&q.consIndex, ci+1)
	// The CQE's body is read after the owner bit said it is ours.
	mmio.FromDevice()
	return off, true
}

// setCI writes consumer index ci to the doorbell record db (big-endian, 24
// bits): one byte-swapped store, where binary.BigEndian's of a value
// whose top byte is known to be zero is split into three.
func setCI(db *uint32, ci uint32) {
	v := ci & 0xffffff
	if littleEndian {
		v = bits.ReverseBytes32(v)
	}
	*db = v
}

// updateConsIndex hands the consumed CQEs back to the device.
func (q *cq) updateConsIndex() {
	binary.BigEndian.PutUint32(q.db.b[4*cqSetCI:], q.consIndex.Load()&0xffffff)
}

// Poll moves up to len(wc) completions into wc and hands their slots back
// with one doorbell record write, which it makes even when it found none,
// as mlx5_poll_cq does. A CQE the provider cannot place (its QP is not
// known) ends the poll; it is consumed, and the completions before it are
// returned (libmlx5 returns an error and drops them).
func (q *cq) Poll(wc []provider.WC) int {
	n, _ := q.PollStatus(wc)
	return n
}

// PollStatus is Poll, and reports whether any completion it moved failed
// (package cq, which calls Empty and PollFound itself, then clears what a
// failure leaves undefined).
//
// The empty CQ, a busy-wait's every turn, is answered by Empty, without
// entering either loop: the doorbell record is written, as libmlx5 writes
// it then too.
func (q *cq) PollStatus(wc []provider.WC) (int, bool) {
	if q.Empty() {
		return 0, false
	}
	return q.PollFound(wc)
}

// Empty reports whether PollStatus would find no completion (software
// does not own the CQE at the consumer index), and then leaves what
// PollStatus leaves: the doorbell record written, as libmlx5 writes it
// for an empty poll too. It is small enough to inline, so that package
// cq's Poll answers an empty CQ without a call. When it reports false,
// PollFound polls.
//
// The consumer index is read with the intrinsic and setCI is given the
// record: an inlined method whose line has no instruction of the
// caller's own leaves an inline mark, a NOP on every empty poll, and
// loading the record's address as the argument is such an instruction.
func (q *cq) Empty() bool {
	ci := atomic.LoadUint32((*uint32)(unsafe.Pointer(&q.consIndex)))
	if owned(q.buf[int(ci&q.mask)*cqeSize+cqeSize-1], ci, q.mask) {
		return false
	}
	setCI(q.ciDB, ci)
	return true
}

// PollFound is PollStatus once Empty has reported false, with nothing
// else polling the CQ in between (package cq holds the CQ's lock, or its
// owner's gate, across both): the CQE at the consumer index is software's
// (it stays so until it is consumed), which PollFound does not look at
// again. It inlines, so that the caller calls pollFast at once.
func (q *cq) PollFound(wc []provider.WC) (int, bool) { return q.pollFast(wc) }

// pollFast is PollFound: for CQE version 1 in one loop, it decodes the
// common completions (a send, RDMA write or read that succeeded; a
// receive, with or without immediate data or invalidation, on a QP's
// receive queue or an SRQ) straight into wc, as parse would, and hands
// every other CQE (errors, inline scatter data, resize, other send
// opcodes, a QP it cannot find) to parse, out of line. Nothing is written
// to wc before the CQE is known to be common, so parse sees the same wc
// the general path would. TestPollFast compares the two paths.
//
// The loop makes no call on the common path, since a call costs the
// spills of everything live: the CQEs software owns are counted first
// and one barrier orders the reads of all their bodies after their owner
// bits (where libmlx5 has one per CQE; on amd64 it is the compiler's
// only, which an atomic load of the last owner word counted makes
// without a call);
// the consumer index and the send queues' tail stay in registers and
// are stored at the end (the tail with the release store parse would
// make for each), or before parse, which reads and moves them. A
// receive queue's tail is stored per CQE, as parse stores it.
//
// The CQE's big-endian fields are read with binary.BigEndian itself
// rather than their get methods: each get, inlined, left a no-op (its
// inline mark) on the way, six per receive.
func (q *cq) pollFast(wc []provider.WC) (int, bool) {
	if !q.v1 || len(wc) == 0 {
		// CQE version 0, or a poll of none, which writes the doorbell
		// record as libmlx5's does.
		return q.pollGeneral(wc)
	}
	buf, mask := q.buf, q.mask
	// Empty saw the CQE at ci is ours. (atomic.LoadUint32, the
	// intrinsic: the Load method, inlined, leaves its mark as a no-op.)
	ci := atomic.LoadUint32((*uint32)(unsafe.Pointer(&q.consIndex)))
	var cur cursor // the QP of the last CQE: libmlx5's cur_rsc
	var t tails
	n, failed := 0, uint32(0)
batch:
	for {
		// The CQE at ci is ours: count those after it.
		// j is the consumer index of the CQE at k, stepped with it.
		k, j := n+1, ci+1
		for k < len(wc) && owned(opOwnAt(buf, j, mask), j, mask) {
			k, j = k+1, j+1
		}
		// The owner bits are read again, the last one counted with an
		// atomic load, so that FromDeviceAtomic orders the bodies' loads
		// after it, and after the loads the loop's branches consumed.
		ownerLoad(buf, int((j-1)&mask)*cqeSize)
		mmio.FromDeviceAtomic()
		// The batch's CQEs through the ring's base, as opOwnAt reads
		// them (Empty's checked read came first), and its completions
		// through wc's, n below k, which the count kept within len(wc):
		// no bounds checks, and neither length stays live in a register
		// (the loop has too few, and reloaded them per CQE).
		ring, out := unsafe.Pointer(unsafe.SliceData(buf)), unsafe.Pointer(unsafe.SliceData(wc))
		for ; n < k; n++ {
			off := int(ci&mask) * cqeSize
			e := (*cqe)(unsafe.Add(ring, off))
			op := e.opOwn
			ci++
			w := (*provider.WC)(unsafe.Add(out, uintptr(n)*unsafe.Sizeof(provider.WC{})))
			// The QP, by the user index CQE version 1 names it by
			// (get_req_context, get_cur_rsc).
			qp := cur.qp
			if rsn := binary.BigEndian.Uint32(e.srqnUIdx[:]) & 0xffffff; qp == nil || qp.rsn != rsn {
				qp = q.ctx.uidx.find(rsn)
				cur.qp = qp
			}
			if op&(inlineScatter32|inlineScatter64) != 0 || qp == nil {
				goto slow
			}
			switch op >> 4 {
			case cqeReq: // handle_good_req
				sq := &qp.sq
				if sq.wqeCnt == 0 {
					goto slow
				}
				sop := binary.BigEndian.Uint32(e.sopDropQPN[:])
				var opcode, flags uint32
				switch sop >> 24 {
				case opRDMAWrite:
					opcode = abi.IB_WC_RDMA_WRITE
				case opRDMAWriteImm:
					opcode, flags = abi.IB_WC_RDMA_WRITE, abi.IB_WC_WITH_IMM
				case opSend, opSendInval:
					opcode = abi.IB_WC_SEND
				case opSendImm:
					opcode, flags = abi.IB_WC_SEND, abi.IB_WC_WITH_IMM
				case opRDMARead:
					opcode = abi.IB_WC_RDMA_READ
					w.ByteLen = binary.BigEndian.Uint32(e.byteCnt[:])
				default:
					goto slow
				}
				idx := uint32(binary.BigEndian.Uint16(e.wqeCounter[:])) & (sq.wqeCnt - 1)
				sq.acquire()
				w.ID = sq.wrid[idx]
				w.Status = abi.IB_WC_SUCCESS
				w.Opcode = opcode
				w.QPNum = sop & 0xffffff
				w.Flags = flags
				if t.sq != &sq.tail {
					if t.sq != nil {
						// Another QP's, within one poll: rare
						// enough for a full barrier's store,
						// which needs no call.
						t.sq.Store(t.sqv)
					}
					t.sq = &sq.tail
				}
				t.sqv = sq.wqeHead[idx] + 1
				continue

			case cqeRespWrImm, cqeRespSend, cqeRespSendI, cqeRespSendIn: // handle_responder
				if srq := qp.srq; srq != nil {
					cur.srq = srq
					ctr := int(binary.BigEndian.Uint16(e.wqeCounter[:]))
					if ctr >= srq.max {
						goto slow
					}
					w.ID = srq.takeWRID(ctr)
				} else {
					rq := &qp.rq
					if rq.wqeCnt == 0 {
						goto slow
					}
					// Ordered after the Flush that posted this
					// WQE, which may have come after the last's
					// (rq.acquire, whose inline marks were no-ops).
					atomic.LoadUint32((*uint32)(unsafe.Pointer(&rq.head)))
					// The tail moved per CQE, as parse moves it
					// (a release store, a MOV on amd64): fewer
					// instructions than keeping it aside for the
					// end. wrid has wqeCnt entries (as Put's
					// write, no bounds check: the index is masked).
					tail := atomic.LoadUint32((*uint32)(unsafe.Pointer(&rq.tail)))
					w.ID = *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(rq.wrid)), uintptr(tail&(rq.wqeCnt-1))*8))
					mem.StoreRelease(&rq.tail, tail+1)
				}
				// binary.BigEndian.Uint32 spelled out: the loads
				// were scheduled before the calls' inline marks,
				// which then stayed as no-ops.
				b, f := &e.immInvalPKey, &e.flagsRQPN
				imm := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
				fr := uint32(f[0])<<24 | uint32(f[1])<<16 | uint32(f[2])<<8 | uint32(f[3])
				var flags uint32
				switch op >> 4 {
				case cqeRespWrImm:
					w.Opcode = abi.IB_WC_RECV_RDMA_WITH_IMM
					flags = abi.IB_WC_WITH_IMM
					w.ImmData = imm
				case cqeRespSend:
					w.Opcode = abi.IB_WC_RECV
				case cqeRespSendI:
					w.Opcode = abi.IB_WC_RECV
					flags = abi.IB_WC_WITH_IMM
					w.ImmData = imm
				default: // cqeRespSendIn
					w.Opcode = abi.IB_WC_RECV
					flags = abi.IB_WC_WITH_INVALIDATE
					w.ImmData = imm
				}
				if (fr>>28)&3 != 0 {
					flags |= abi.IB_WC_GRH
				}
				w.Status = abi.IB_WC_SUCCESS
				w.ByteLen = binary.BigEndian.Uint32(e.byteCnt[:])
				w.QPNum = binary.BigEndian.Uint32(e.sopDropQPN[:]) & 0xffffff
				w.SrcQP = fr & 0xffffff
				w.Flags = flags
				w.PKeyIndex = uint16(imm)
				w.SLID = binary.BigEndian.Uint16(e.slid[:])
				w.SL = uint8(fr>>24) & 0xf
				w.DLIDPathBits = e.mlPath & 0x7f
				continue
			}
		slow:
			// parse reads the queues' tails and the consumer index,
			// and may consume more CQEs (an SRQ's page fault): count
			// again after it.
			t.flushSQ()
			mem.StoreRelease(&q.consIndex, ci)
			r := q.parse(off, &cur, w)
			ci = q.consIndex.Load()
			if r != cqOK {
				goto done
			}
			failed |= w.Status
			n++
			if n == len(wc) || !owned(opOwnAt(buf, ci, mask), ci, mask) {
				goto done
			}
			continue batch
		}
		// Every CQE counted is taken: the count stopped at a full wc
		// or at a CQE the device still owns, which libmlx5 too reads
		// once and stops at.
		break
	}
done:
	// flushSQ and setCI written out: each, inlined, left its inline
	// mark as a no-op.
	if t.sq != nil {
		mem.StoreRelease(t.sq, t.sqv)
	}
	mem.StoreRelease(&q.consIndex, ci)
	v := ci & 0xffffff
	if littleEndian {
		v = bits.ReverseBytes32(v)
	}
	*q.ciDB = v
	return n, failed != 0
}

// ownerLoad reads the last word of the CQE at off, which holds its owner
// bit, with an atomic load, for mmio.FromDeviceAtomic: on amd64 one MOV
// where FromDevice was a call (pollFast). A CQE is 64-byte aligned. off
// is a slot's offset, read without a bounds check as opOwnAt reads.
func ownerLoad(buf []byte, off int) {
	atomic.LoadUint32((*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(buf)), off+cqeSize-4)))
}

// opOwnAt returns the last byte of the CQE at consumer index j (its
// opcode and owner bit) without a bounds check, for pollFast's count of
// the CQEs software owns: the ring holds mask+1 CQEs (CreateCQ allocated
// them, and Finish only lowers mask). pollFast runs after Empty, whose
// read of the ring is checked: on a closed CQ, whose ring is gone, it
// panics first, as PollStatus did.
func opOwnAt(buf []byte, j, mask uint32) uint8 {
	return *(*uint8)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(buf)), uintptr(j&mask)*cqeSize+cqeSize-1))
}

// tails is the send queue tail pollFast has moved and not yet stored:
// the queue (nil for none) and its new tail. (A receive queue's tail is
// stored per CQE, as parse stores it: fewer instructions than keeping it
// here, where its tests cost a poll of one more than the store saved.)
type tails struct {
	sq  *atomic.Uint32
	sqv uint32
}

func (t *tails) flushSQ() {
	if t.sq != nil {
		mem.StoreRelease(t.sq, t.sqv)
		t.sq = nil
	}
}

// pollGeneral is PollStatus one CQE at a time through parse, which knows
// every CQE: for CQE version 0, and the reference pollFast is tested
// against.
func (q *cq) pollGeneral(wc []provider.WC) (int, bool) {
	var cur cursor
	n, failed := 0, uint32(0)
	for n < len(wc) {
		if q.pollOne(&cur, &wc[n]) != cqOK {
			break
		}
		failed |= wc[n].Status
		n++
	}
	q.updateConsIndex()
	return n, failed != 0
}

// Take reads one completion and keeps its slot until Release.
func (q *cq) Take(wc *provider.WC) bool {
	var cur cursor
	return q.pollOne(&cur, wc) == cqOK
}

// Release hands back the slots of the completions Take read.
func (q *cq) Release() {
	q.updateConsIndex()
}

// Arm asks the device for an event at the next completion (or the next
// solicited one): the request goes into the doorbell record's second word
// and, with the CQ number, to the CQ doorbell of the context's UAR, as
// mlx5_arm_cq writes them. Without a UAR (dynamic UARs on a device that
// cannot allocate them), or once closed, it reports false. It runs under
// the CQ's lock (libmlx5 takes none: docs/concurrency.md, Arming under
// the lock). Package cq does the same by the concrete type, with
// ArmUAR and ArmRecord.
func (q *cq) Arm(solicitedOnly bool) bool {
	uar := q.ArmUAR()
	if uar == nil {
		return false
	}
	mmio.FencedStore64(uar, q.ArmRecord(solicitedOnly))
	return true
}

// ArmUAR is the CQ doorbell an arm rings, or nil when the CQ cannot arm
// in user space: no UAR, or closed (Close clears it).
func (q *cq) ArmUAR() *[8]byte { return q.uar }

// ArmRecord is Arm up to the doorbell: it writes the arm request into the
// doorbell record and returns the value for ArmUAR's doorbell, which the
// caller writes with mmio.FencedStore64: its first fence puts the record
// ahead of the doorbell, its second sends the doorbell out at once
// (mlx5_arm_cq's mmio_wc_start and mmio_flush_writes). Call it only
// under the CQ's lock and with ArmUAR not nil. It is small enough to
// inline, unlike Arm, whose assembly call the inliner prices above its
// budget: that is how package cq's ReqNotify arms one call deep.
func (q *cq) ArmRecord(solicitedOnly bool) uint64 {
	sol := uint32(0) // a bool as 0 or 1: a zero extension, not a branch or CMOV
	if solicitedOnly {
		sol = 1
	}
	word := q.armSN.Load() | sol*cqDBReqNotSol | q.consIndex.Load()&0xffffff
	// The record's word is big-endian, and so is the doorbell, the
	// word then the CQ number's: one byte swap serves both.
	if littleEndian {
		word = bits.ReverseBytes32(word)
		*q.armDB = word
		return uint64(word) | q.cqnDB
	}
	*q.armDB = word
	return uint64(word)<<32 | q.cqnDB
}

// Event counts a completion event of the CQ: the next Arm carries the next
// sequence number, which the device needs to tell a new request from one
// it already answered (mlx5_cq_event). Package cq calls it
// (provider.EventCounter), under the CQ's lock, for every completion event
// it reads for the CQ, as ibv_get_cq_event calls the driver's cq_event.
func (q *cq) Event() {
	// The arm word carries the number's low two bits (libmlx5's
	// arm_sn & 3): kept there, they cost an arm no mask and no shift.
	mem.StoreRelease(&q.armSN, (q.armSN.Load()+1<<28)&(3<<28))
}

// cursor caches the QP and SRQ of the last CQE within one poll, as
// poll_cq's cur_rsc and cur_srq.
type cursor struct {
	qp  *qp
	srq *srq
}

// pollOne reads the next CQE into wc (mlx5_poll_one).
func (q *cq) pollOne(cur *cursor, wc *provider.WC) int {
	off, ok := q.next()
	if !ok {
		return cqEmpty
	}
	return q.parse(off, cur, wc)
}

// parse is mlx5_parse_cqe for ibv_poll_cq: it fills the fields of wc that
// libmlx5 fills for the CQE and leaves the others as they were. The flags
// are the kernel's IB_WC_* (the provider's WC is struct ib_uverbs_wc);
// libmlx5's IBV_WC_WITH_INV is IB_WC_WITH_INVALIDATE here.
func (q *cq) parse(off int, cur *cursor, wc *provider.WC) int {
	v1 := q.ctx.cqeVersion == cqeVersionV1
again:
	e := mem.At[cqe](q.buf, off)
	qpn := e.sopDropQPN.get() & 0xffffff
	wc.Flags = 0
	wc.QPNum = qpn
	opcode := e.opOwn >> 4
	switch opcode {
	case cqeReq:
		rsn := qpn
		if v1 {
			rsn = e.srqnUIdx.get() & 0xffffff
		}
		qp := q.reqContext(cur, rsn, v1)
		if qp == nil || qp.sq.wqeCnt == 0 {
			return cqPollErr
		}
		sq := &qp.sq
		ctr := e.wqeCounter.get()
		idx := uint32(ctr) & (sq.wqeCnt - 1)
		sq.acquire()
		handleGoodReq(wc, e)
		status := uint32(abi.IB_WC_SUCCESS)
		switch {
		case e.opOwn&inlineScatter32 != 0:
			status = q.copyToSendWQE(qp, ctr, off, int(wc.ByteLen))
		case e.opOwn&inlineScatter64 != 0:
			// libmlx5 passes the CQE's address less one byte here
			// (void pointer arithmetic), not the CQE before it.
			status = q.copyToSendWQE(qp, ctr, off-1, int(wc.ByteLen))
		}
		wc.ID = sq.wrid[idx]
		wc.Status = status
		mem.StoreRelease(&sq.tail, sq.wqeHead[idx]+1)

	case cqeRespWrImm, cqeRespSend, cqeRespSendI, cqeRespSendIn:
		srqnUIdx := e.srqnUIdx.get() & 0xffffff
		qp, srq, ok := q.respContext(cur, qpn, srqnUIdx, v1)
		if !ok {
			return cqPollErr
		}
		wc.Status = q.handleResponder(wc, e, off, qp, srq)

	case cqeNoPacket:
		// Tag matching, not implemented; libmlx5 fails any other.
		return cqPollErr

	case cqeSigErr:
		// The signature error of an mkey; there are none here, and
		// libmlx5 fails a CQE whose mkey it does not know.
		return cqPollErr

	case cqeResizeCQ:

	case cqeReqErr, cqeRespErr:
		ee := mem.At[errCQE](q.buf, off)
		srqnUIdx := e.srqnUIdx.get() & 0xffffff
		wc.Status = errStatus(ee.syndrome)
		wc.VendorErr = uint32(ee.vendorErrSynd)
		if opcode == cqeReqErr {
			rsn := qpn
			if v1 {
				rsn = srqnUIdx
			}
			qp := q.reqContext(cur, rsn, v1)
			if qp == nil || qp.sq.wqeCnt == 0 {
				return cqPollErr
			}
			sq := &qp.sq
			idx := uint32(ee.wqeCounter.get()) & (sq.wqeCnt - 1)
			sq.acquire()
			wc.ID = sq.wrid[idx]
			mem.StoreRelease(&sq.tail, sq.wqeHead[idx]+1)
			break
		}
		qp, srq, ok := q.respContext(cur, qpn, srqnUIdx, v1)
		if !ok {
			return cqPollErr
		}
		if srq != nil {
			ctr := ee.wqeCounter.get()
			if int(ctr) >= srq.max {
				return cqPollErr
			}
			if ee.syndrome == syndRemoteAbortedErr && ee.vendorErrSynd == vendorSyndODPPFault {
				// The device could not reach the receive buffer:
				// post the WQE again and read the next CQE instead.
				srq.completeODPFault(int(ctr))
				next, ok := q.next()
				if !ok {
					return cqNoData
				}
				off = next
				goto again
			}
			wc.ID = srq.takeWRID(int(ctr))
			break
		}
		rq := &qp.rq
		if rq.wqeCnt == 0 {
			return cqPollErr
		}
		rq.acquire()
		t := rq.tail.Load()
		wc.ID = rq.wrid[t&(rq.wqeCnt-1)]
		mem.StoreRelease(&rq.tail, t+1)
	}
	return cqOK
}

// reqContext finds the QP of a requester CQE: by user index with CQE
// version 1, by QP number otherwise (get_req_context).
func (q *cq) reqContext(cur *cursor, rsn uint32, v1 bool) *qp {
	if cur.qp == nil || rsn != cur.qp.rsn {
		if v1 {
			cur.qp = q.ctx.uidx.find(rsn)
		} else {
			cur.qp = q.ctx.qps.find(rsn)
		}
	}
	return cur.qp
}

// respContext finds the QP, and the SRQ if it has one, of a responder CQE
// (get_cur_rsc): with CQE version 1 by the QP's user index; with version 0
// by the SRQ number, if the CQE names one, else by the QP number. srq is
// nil when the receive queue is the QP's own.
func (q *cq) respContext(cur *cursor, qpn, srqnUIdx uint32, v1 bool) (*qp, *srq, bool) {
	if v1 {
		if cur.qp == nil || srqnUIdx != cur.qp.rsn {
			cur.qp = q.ctx.uidx.find(srqnUIdx)
			if cur.qp == nil {
				return nil, nil, false
			}
		}
		if cur.qp.srq != nil {
			cur.srq = cur.qp.srq
			return cur.qp, cur.srq, true
		}
		return cur.qp, nil, true
	}
	if srqnUIdx != 0 {
		if cur.srq == nil || srqnUIdx != cur.srq.srqn {
			cur.srq = q.ctx.srqs.find(srqnUIdx)
			if cur.srq == nil {
				return nil, nil, false
			}
		}
		return cur.qp, cur.srq, true
	}
	if cur.qp == nil || qpn != cur.qp.rsn {
		cur.qp = q.ctx.qps.find(qpn)
		if cur.qp == nil {
			return nil, nil, false
		}
	}
	return cur.qp, nil, true
}

// handleGoodReq sets the opcode (and, for reads and atomics, the length)
// of a successful send's completion from the send opcode the CQE echoes.
// An opcode it does not know leaves wc.Opcode as it was.
func handleGoodReq(wc *provider.WC, e *cqe) {
	switch e.sopDropQPN.get() >> 24 {
	case opRDMAWriteImm:
		wc.Flags |= abi.IB_WC_WITH_IMM
		wc.Opcode = abi.IB_WC_RDMA_WRITE
	case opRDMAWrite:
		wc.Opcode = abi.IB_WC_RDMA_WRITE
	case opSendImm:
		wc.Flags |= abi.IB_WC_WITH_IMM
		wc.Opcode = abi.IB_WC_SEND
	case opSend, opSendInval:
		wc.Opcode = abi.IB_WC_SEND
	case opRDMARead:
		wc.Opcode = abi.IB_WC_RDMA_READ
		wc.ByteLen = e.byteCnt.get()
	case opAtomicCS:
		wc.Opcode = abi.IB_WC_COMP_SWAP
		wc.ByteLen = 8
	case opAtomicFA:
		wc.Opcode = abi.IB_WC_FETCH_ADD
		wc.ByteLen = 8
	case opUMR, opSetPSV, opNOP, opMMO:
		// The opcode the WQE was posted with (wr_data), which is 0
		// for everything this provider posts.
		wc.Opcode = abi.IB_WC_SEND
	case opTSO:
		wc.Opcode = abi.IB_WC_LSO
	}
}

// handleResponder fills a receive completion (handle_responder) and
// returns its status.
func (q *cq) handleResponder(wc *provider.WC, e *cqe, off int, qp *qp, srq *srq) uint32 {
	wc.ByteLen = e.byteCnt.get()
	var status uint32
	if srq != nil {
		ctr := int(e.wqeCounter.get())
		if ctr >= srq.max {
			return abi.IB_WC_GENERAL_ERR
		}
		wc.ID = srq.takeWRID(ctr)
		switch {
		case e.opOwn&inlineScatter32 != 0:
			status = srq.copyToRecv(ctr, q.cqeBytes(off, int(wc.ByteLen)), int(wc.ByteLen))
		case e.opOwn&inlineScatter64 != 0:
			status = srq.copyToRecv(ctr, q.cqeBytes(off-cqeSize, int(wc.ByteLen)), int(wc.ByteLen))
		}
	} else {
		rq := &qp.rq
		if rq.wqeCnt == 0 {
			return abi.IB_WC_GENERAL_ERR
		}
		rq.acquire()
		t := rq.tail.Load()
		idx := t & (rq.wqeCnt - 1)
		wc.ID = rq.wrid[idx]
		mem.StoreRelease(&rq.tail, t+1)
		switch {
		case e.opOwn&inlineScatter32 != 0:
			status = qp.copyToRecvWQE(idx, q.cqeBytes(off, int(wc.ByteLen)), int(wc.ByteLen))
		case e.opOwn&inlineScatter64 != 0:
			status = qp.copyToRecvWQE(idx, q.cqeBytes(off-cqeSize, int(wc.ByteLen)), int(wc.ByteLen))
		}
	}
	if status != abi.IB_WC_SUCCESS {
		return status
	}
	imm := e.immInvalPKey.get()
	switch e.opOwn >> 4 {
	case cqeRespWrImm:
		wc.Opcode = abi.IB_WC_RECV_RDMA_WITH_IMM
		wc.Flags |= abi.IB_WC_WITH_IMM
		wc.ImmData = imm
	case cqeRespSend:
		wc.Opcode = abi.IB_WC_RECV
	case cqeRespSendI:
		wc.Opcode = abi.IB_WC_RECV
		wc.Flags |= abi.IB_WC_WITH_IMM
		wc.ImmData = imm
	case cqeRespSendIn:
		wc.Opcode = abi.IB_WC_RECV
		wc.Flags |= abi.IB_WC_WITH_INVALIDATE
		wc.ImmData = imm
	}
	fr := e.flagsRQPN.get()
	wc.SLID = e.slid.get()
	wc.SL = uint8(fr>>24) & 0xf
	wc.SrcQP = fr & 0xffffff
	wc.DLIDPathBits = e.mlPath & 0x7f
	if (fr>>28)&3 != 0 {
		wc.Flags |= abi.IB_WC_GRH
	}
	wc.PKeyIndex = uint16(imm)
	return abi.IB_WC_SUCCESS
}

// cqeBytes returns the CQ's bytes from off on, for an inline scatter of n
// bytes; nil where they are not all in the ring, which libmlx5 would read
// past (a 64-byte scatter in a 64-byte CQE, which the device does not
// send).
func (q *cq) cqeBytes(off, n int) []byte {
	if off < 0 || n < 0 || off+n > len(q.buf) {
		return nil
	}
	return q.buf[off:]
}

// copyToSendWQE scatters the data of an RDMA read or atomic response that
// the device put in the CQE into the WQE's local buffers
// (mlx5_copy_to_send_wqe). src is the offset of the data in the ring.
func (q *cq) copyToSendWQE(qp *qp, ctr uint16, src, size int) uint32 {
	sq := &qp.sq
	idx := int(uint32(ctr) & (sq.wqeCnt - 1))
	ctrlOff := sq.off + idx<<sendWQEShift
	if qp.typ != abi.IB_UVERBS_QPT_RC {
		return abi.IB_WC_GENERAL_ERR
	}
	ctrl := mem.At[ctrlSeg](qp.buf, ctrlOff)
	p := ctrlOff + segSize
	switch ctrl.opmodIdxOpcode.get() & 0xff {
	case opRDMARead:
		p += segSize
	case opAtomicCS, opAtomicFA:
		p += 2 * segSize
	default:
		return abi.IB_WC_REM_INV_REQ_ERR
	}
	data := q.cqeBytes(src, size)
	scat := p
	n := int(ctrl.qpnDS.get()&0x3f) - (scat-ctrlOff)/segSize
	qend := sq.end()
	if scat+n*segSize > qend {
		tmp := (qend - scat) / segSize
		orig := size
		if q.ctx.copyToScat(qp.buf, scat, qend, tmp, data, &size) == abi.IB_WC_SUCCESS {
			return abi.IB_WC_SUCCESS
		}
		n -= tmp
		data = data[orig-size:]
		scat = sq.off
	}
	return q.ctx.copyToScat(qp.buf, scat, qend, n, data, &size)
}

// copyToScat copies *size bytes of data into the buffers of up to n
// scatter entries at scat in buf (copy_to_scat), not past end. Entries
// with the dump-and-fill lkey take their share without a copy.
func (c *context) copyToScat(buf []byte, scat, end, n int, data []byte, size *int) uint32 {
	if *size == 0 {
		return abi.IB_WC_SUCCESS
	}
	for i := 0; i < n; i++ {
		if scat+segSize > end {
			break
		}
		d := mem.At[dataSeg](buf, scat)
		cp := min(*size, int(d.byteCount.get()))
		if cp > len(data) {
			break
		}
		if d.lkey.get() != c.dumpFillMkey {
			copy(mem.User(d.addr.get(), cp), data[:cp])
		}
		*size -= cp
		if *size == 0 {
			return abi.IB_WC_SUCCESS
		}
		data = data[cp:]
		scat += segSize
	}
	return abi.IB_WC_LOC_LEN_ERR
}

// errStatus maps an error CQE's syndrome to a work completion status
// (mlx5_handle_error_cqe).
func errStatus(synd uint8) uint32 {
	switch synd {
	case syndLocalLengthErr:
		return abi.IB_WC_LOC_LEN_ERR
	case syndLocalQPOpErr:
		return abi.IB_WC_LOC_QP_OP_ERR
	case syndLocalProtErr:
		return abi.IB_WC_LOC_PROT_ERR
	case syndWRFlushErr:
		return abi.IB_WC_WR_FLUSH_ERR
	case syndMWBindErr:
		return abi.IB_WC_MW_BIND_ERR
	case syndBadRespErr:
		return abi.IB_WC_BAD_RESP_ERR
	case syndLocalAccessErr:
		return abi.IB_WC_LOC_ACCESS_ERR
	case syndRemoteInvalReq:
		return abi.IB_WC_REM_INV_REQ_ERR
	case syndRemoteAccessErr:
		return abi.IB_WC_REM_ACCESS_ERR
	case syndRemoteOpErr:
		return abi.IB_WC_REM_OP_ERR
	case syndTransportRetry:
		return abi.IB_WC_RETRY_EXC_ERR
	case syndRNRRetryExcErr:
		return abi.IB_WC_RNR_RETRY_EXC_ERR
	case syndRemoteAbortedErr:
		return abi.IB_WC_REM_ABORT_ERR
	}
	return abi.IB_WC_GENERAL_ERR
}

// clean removes the CQEs of a destroyed QP (or of the SRQ it received
// from) from the ring, moving the later ones down over them, as
// __mlx5_cq_clean; its caller holds the CQ's lock (qp.lockCQs). rsn is the QP's user index with
// CQE version 1, its number otherwise.
func (q *cq) clean(rsn uint32, srq *srq) {
	if q == nil || q.closed {
		return
	}
	// Find the producer: the first CQE the device has not given us, or
	// a whole ring on.
	ci := q.consIndex.Load()
	prod := ci
	for {
		if _, ok := q.swCQE(prod); !ok {
			break
		}
		if prod == ci+q.mask {
			break
		}
		prod++
	}
	v1 := q.ctx.cqeVersion == cqeVersionV1
	nfreed := uint32(0)
	for {
		prod--
		if int32(prod-ci) < 0 {
			break
		}
		off := int(prod&q.mask) * cqeSize
		if q.freeResCQE(off, rsn, srq, v1) {
			nfreed++
		} else if nfreed != 0 {
			dst := int((prod+nfreed)&q.mask) * cqeSize
			owner := q.buf[dst+cqeSize-1] & cqeOwnerMask
			copy(q.buf[dst:dst+cqeSize], q.buf[off:off+cqeSize])
			q.buf[dst+cqeSize-1] = owner | q.buf[dst+cqeSize-1]&^cqeOwnerMask
		}
	}
	if nfreed != 0 {
		mem.StoreRelease(&q.consIndex, ci+nfreed)
		mmio.ToDevice()
		q.updateConsIndex()
	}
}

// freeResCQE reports whether the CQE at off belongs to the QP being
// destroyed, and gives a receive WQE it consumed from an SRQ back to the
// SRQ (free_res_cqe).
func (q *cq) freeResCQE(off int, rsn uint32, srq *srq, v1 bool) bool {
	e := mem.At[cqe](q.buf, off)
	if v1 {
		if e.srqnUIdx.get()&0xffffff != rsn {
			return false
		}
		if srq != nil && isResponder(e.opOwn>>4) {
			srq.freeWQE(int(e.wqeCounter.get()))
		}
		return true
	}
	if e.sopDropQPN.get()&0xffffff != rsn {
		return false
	}
	if srq != nil && e.srqnUIdx.get()&0xffffff != 0 {
		srq.freeWQE(int(e.wqeCounter.get()))
	}
	return true
}

func isResponder(opcode uint8) bool {
	switch opcode {
	case cqeRespWrImm, cqeRespSend, cqeRespSendI, cqeRespSendIn, cqeRespErr:
		return true
	}
	return false
}

// roundupPow2 is rdma-core's roundup_pow_of_two for n > 0.
func roundupPow2(n uint64) uint64 {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len64(n-1)
}

// ilog32 is rdma-core's ilog32: the number of bits n needs.
func ilog32(n uint32) uint { return uint(bits.Len32(n)) }

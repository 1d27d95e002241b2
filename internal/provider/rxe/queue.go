package rxe

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync/atomic"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// Layout of struct rxe_queue_buf and the fixed parts of its elements,
// checked against the abi structs in the tests.
const (
	queueHdr    = 384 // sizeof(struct rxe_queue_buf); slot 0 follows
	offElemLog  = 0   // log2_elem_size
	offMask     = 4   // index_mask
	offProducer = 128 // producer_index
	offConsumer = 256 // consumer_index

	sendWQEHdr = 208 // sizeof(struct rxe_send_wqe); sge[] or inline_data[] follow
	recvWQEHdr = 40  // sizeof(struct rxe_recv_wqe); sge[] follows
	sgeSize    = 16  // sizeof(struct rxe_sge)
	wcSize     = 48  // sizeof(struct ib_uverbs_wc)

	// maxLog2Elem bounds log2_elem_size: the kernel's largest element is
	// a send WQE with the maximum inline data, well under 64 KiB.
	maxLog2Elem = 16
)

// queue is one mapped rxe_queue_buf. log2 and mask are read from the
// header once, at map time: the kernel never changes them in place (a
// resize is a new mapping), and reading them once means a stray write to
// the header cannot make us index outside buf.
type queue struct {
	dev  provider.Device
	buf  []byte // nil once closed
	log2 uint32
	size uint32 // 1<<log2, the slot size in bytes
	mask uint32
	prod *atomic.Uint32
	cons *atomic.Uint32
	// free is how many slots after the producer were free when the
	// consumer index was last loaded, less those taken since. The kernel
	// only moves the consumer forward, so free never overstates the room:
	// take loads the consumer again only when free runs out, which keeps
	// the kernel's cache line out of every Put. It starts at 0, so the
	// first take loads.
	free uint32
	// limit is how many slots may be in use: the work requests the kernel
	// granted, which may be fewer than the ring's power-of-two size.
	limit uint32
}

// open maps mi and checks that the header describes a ring that fits the
// mapping, with slots of at least need bytes.
func (q *queue) open(dev provider.Device, mi abi.MMInfo, need int, what string) error {
	if mi.Size < queueHdr {
		return fmt.Errorf("rxe: %s mapping of %d bytes is smaller than its header: %w", what, mi.Size, provider.ErrInvalid)
	}
	buf, err := dev.Mmap(mi.Offset, int(mi.Size))
	if err != nil {
		return fmt.Errorf("rxe: mmap %s (offset %#x, %d bytes): %w", what, mi.Offset, mi.Size, err)
	}
	if err := q.attach(dev, buf, need); err != nil {
		dev.Munmap(buf)
		return fmt.Errorf("rxe: %s: %w", what, err)
	}
	return nil
}

// attach validates the header of the mapping buf and takes it over.
func (q *queue) attach(dev provider.Device, buf []byte, need int) error {
	if len(buf) < queueHdr {
		return fmt.Errorf("mapping of %d bytes is smaller than the %d-byte header: %w", len(buf), queueHdr, provider.ErrInvalid)
	}
	log2 := binary.NativeEndian.Uint32(buf[offElemLog:])
	mask := binary.NativeEndian.Uint32(buf[offMask:])
	if log2 > maxLog2Elem {
		return fmt.Errorf("bad header: log2_elem_size %d: %w", log2, provider.ErrInvalid)
	}
	if mask == 0 || mask&(mask+1) != 0 {
		return fmt.Errorf("bad header: index_mask %#x is not 2^n-1 with n > 0: %w", mask, provider.ErrInvalid)
	}
	if elem := 1 << log2; elem < need {
		return fmt.Errorf("bad header: %d-byte slots, need %d: %w", elem, need, provider.ErrInvalid)
	}
	// Slot offsets are computed in 32 bits (offset; cq's PollStatus uses 64 bits).
	if ring := (uint64(mask) + 1) << log2; ring >= 1<<32 {
		return fmt.Errorf("bad header: %d slots of %d bytes, 4 GiB or more: %w", uint64(mask)+1, 1<<log2, provider.ErrInvalid)
	}
	if end := uint64(queueHdr) + (uint64(mask)+1)<<log2; end > uint64(len(buf)) {
		return fmt.Errorf("bad header: %d slots of %d bytes overrun the %d-byte mapping: %w",
			uint64(mask)+1, 1<<log2, len(buf), provider.ErrInvalid)
	}
	prod, cons := mem.Uint32(buf, offProducer), mem.Uint32(buf, offConsumer)
	if p, c := prod.Load(), cons.Load(); p > mask || c > mask {
		return fmt.Errorf("bad header: producer %d or consumer %d exceeds index_mask %#x: %w", p, c, mask, provider.ErrInvalid)
	}
	*q = queue{dev: dev, buf: buf, log2: log2, size: 1 << log2, mask: mask, prod: prod, cons: cons, limit: mask}
	return nil
}

// setLimit caps the slots in use at n, when n is below the ring's own
// capacity.
func (q *queue) setLimit(n uint32) {
	if n > 0 && n < q.mask {
		q.limit = n
	}
}

// take claims the slot at the producer index p and reports whether it
// was free. Only when the slots known to be free are used up is the
// consumer index loaded again, with acquire: a slot it passed is the
// producer's again.
func (q *queue) take(p uint32) bool {
	if q.free == 0 && !q.reload(p) {
		return false
	}
	q.free--
	return true
}

// reload loads the consumer index and counts the free slots after p.
func (q *queue) reload(p uint32) bool {
	used := (p - q.cons.Load()) & q.mask
	if used >= q.limit {
		return false
	}
	q.free = q.limit - used
	return true
}

// elemSize is the size of a slot in bytes.
func (q *queue) elemSize() int { return 1 << (q.log2 & 31) }

// offset is the byte offset of slot i in buf; i must already be masked.
// It multiplies by the slot size rather than shift by log2 (amd64 shifts
// by a variable count only through CX), in 32 bits, which keeps it
// non-negative for the bounds checks after it: attach refuses rings of
// 4 GiB and more.
func (q *queue) offset(i uint32) int { return queueHdr + int(i*q.size) }

// slot returns slot i; i must already be masked.
func (q *queue) slot(i uint32) []byte {
	off := queueHdr + int(i)<<q.log2
	return q.buf[off : off+1<<q.log2 : off+1<<q.log2]
}

// next is the index after i.
func (q *queue) next(i uint32) uint32 { return (i + 1) & q.mask }

// close unmaps the queue; later calls do nothing.
func (q *queue) close() error {
	if q.buf == nil {
		return nil
	}
	b := q.buf
	q.buf, q.prod, q.cons = nil, nil, nil
	return q.dev.Munmap(b)
}

// errClosed is returned by Put on a closed queue. It is a programming
// error in the caller, who holds the queue's lock around Close.
var errClosed = fmt.Errorf("rxe: %w", provider.ErrClosed)

// beSwap converts between host order and big-endian (network) order,
// which is what imm_data is kept in in WQEs and completions. isBigEndian
// is a constant (endian_*.go), so the swap has no test of it.
func beSwap(x uint32) uint32 {
	if isBigEndian {
		return x
	}
	return bits.ReverseBytes32(x)
}

package rxe

import (
	"fmt"
	"math"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// RQ is the driver's receive queue (and SRQ) as a type uverbs names: its Put,
// reached through a type switch rather than the provider interface, reads
// the caller's own request, which an interface call would make escape.
type RQ = rq

// rq is a receive queue or an SRQ; both hold struct rxe_recv_wqe.
type rq struct {
	q         queue
	maxSGE    uint32
	pending   uint32 // producer including unflushed Puts
	published uint32 // producer the kernel has seen
}

func (r *rq) init() {
	r.pending = r.q.prod.Load()
	r.published = r.pending
}

// Put writes wr in the next slot without publishing it (Flush does).
func (r *rq) Put(wr *provider.RecvWR) error {
	if r.q.buf == nil {
		return errClosed
	}
	// maxSGE SGEs fit a slot: open checked the slot size against the
	// QP's max_recv_sge, and mapSRQ caps an SRQ's at what fits.
	if uint64(len(wr.SGE)) > uint64(r.maxSGE) {
		return (*sgeRefusal)(r)
	}
	p := r.pending
	if !r.q.take(p) {
		return provider.ErrFull
	}
	if !r.write(wr, p) {
		r.q.free++ // take's slot, unused
		return (*lengthRefusal)(r)
	}
	r.pending = r.q.next(p)
	return nil
}

// write writes wr in slot p, which Put and Post took, and reports false,
// having written only SGEs, if they hold more than 4 GiB in all. The
// fields librxe's rxe_post_one_recv sets, and no others: the reserved
// words and the SGE entries past n keep what the slot held, which the
// kernel does not read (clearing the slot cost a quarter of a one-SGE
// post). The slot is found by its offset, each piece checked against the
// mapping by mem.At. The SGEs are summed as they are copied, as librxe
// does; a sum past 4 GiB (which librxe wraps) leaves the slot
// unpublished.
func (r *rq) write(wr *provider.RecvWR, p uint32) bool {
	sges := wr.SGE
	off := r.q.offset(p)
	w := mem.At[abi.RxeRecvWQE](r.q.buf, off)
	var total uint64
	soff := off + recvWQEHdr
	for i := range sges {
		s := sges[i]
		total += uint64(s.Length)
		*mem.At[abi.RxeSGE](r.q.buf, soff+i*sgeSize) = abi.RxeSGE(s)
	}
	if total > math.MaxUint32 {
		return false
	}
	w.WrID = wr.ID
	w.Dma.Length = uint32(total)
	w.Dma.Resid = uint32(total)
	w.Dma.CurSGE = 0
	w.Dma.NumSGE = uint32(len(sges))
	w.Dma.SGEOffset = 0
	return true
}

// Post puts wrs in order, each of at most maxSGE SGEs, and publishes the
// ones it put: Put for each and one Flush, in one call, which is what
// uverbs' PostRecv does with it. It returns how many it put and the
// refusal of the next one. A request of more than maxSGE SGEs is refused
// as one of more than the queue takes (uverbs formats its own error).
// Its own loop rather than Put's, with write's body in line: a call for
// each request cost more than the rest of a one-request post;
// TestRQPostIsPutFlush holds the two to the same bytes.
func (r *rq) Post(wrs []provider.RecvWR, maxSGE int) (int, error) {
	if r.q.buf == nil {
		if len(wrs) == 0 {
			return 0, nil
		}
		return 0, errClosed
	}
	lim := min(maxSGE, int(r.maxSGE))
	p := r.pending
	n := 0
	var err error
	for ; n < len(wrs); n++ {
		wr := &wrs[n]
		sges := wr.SGE
		if len(sges) > lim {
			err = (*sgeRefusal)(r)
			break
		}
		// take's and offset's bodies, written out, as PutPlain's: each
		// call, inlined, left an inline mark, a NOP, per request.
		if r.q.free == 0 && !r.q.reload(p) {
			err = provider.ErrFull
			break
		}
		r.q.free--
		// write's body.
		off := queueHdr + int(p*r.q.size)
		w := mem.At[abi.RxeRecvWQE](r.q.buf, off)
		var total uint64
		soff := off + recvWQEHdr
		for i := range sges {
			s := sges[i]
			total += uint64(s.Length)
			*mem.At[abi.RxeSGE](r.q.buf, soff+i*sgeSize) = abi.RxeSGE(s)
		}
		if total > math.MaxUint32 {
			r.q.free++ // take's slot, unused
			err = (*lengthRefusal)(r)
			break
		}
		w.WrID = wr.ID
		w.Dma.Length = uint32(total)
		w.Dma.Resid = uint32(total)
		w.Dma.CurSGE = 0
		w.Dma.NumSGE = uint32(len(sges))
		w.Dma.SGEOffset = 0
		p = r.q.next(p)
	}
	r.pending = p
	// Flush's work.
	if p != r.published {
		mem.StoreRelease(r.q.prod, p) // the WQEs are written
		r.published = p
	}
	return n, err
}

// Put's refusals are the queue itself as an error, which costs Put no
// call: a call to format one gave Put a stack frame and its check.
// Package uverbs checks the SGEs before Put and formats its own error.
// They read only maxSGE, which never changes.
type (
	sgeRefusal    rq // more SGEs than the queue takes
	lengthRefusal rq // more than 4 GiB in all
)

func (r *sgeRefusal) Error() string {
	return fmt.Sprintf("rxe: receive request with more SGEs than the queue takes (%d): %v", r.maxSGE, provider.ErrInvalid)
}

func (r *sgeRefusal) Unwrap() error { return provider.ErrInvalid }

func (*lengthRefusal) Error() string {
	return fmt.Sprintf("rxe: receive request of more than %d bytes: %v", uint32(math.MaxUint32), provider.ErrInvalid)
}

func (*lengthRefusal) Unwrap() error { return provider.ErrInvalid }

// Flush publishes the pending slots. The responder finds them when the
// next packet arrives, so there is no doorbell.
func (r *rq) Flush() error {
	if r.q.buf == nil || r.pending == r.published {
		return nil
	}
	mem.StoreRelease(r.q.prod, r.pending) // the WQEs are written
	r.published = r.pending
	return nil
}

func (r *rq) Close() error { return r.q.close() }

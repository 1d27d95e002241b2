package rxe

import (
	"fmt"
	"math"
	"unsafe"

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
	_, err := r.post(unsafe.Slice(wr, 1), int(r.maxSGE), false)
	return err
}

// Post puts wrs in order, each of at most maxSGE SGEs, and publishes the
// ones it put: Put for each and one Flush, in one call, which is what
// uverbs' PostRecv does with it. It returns how many it put and the
// refusal of the next one. A request of more than maxSGE SGEs is refused
// as one of more than the queue takes (uverbs formats its own error).
func (r *rq) Post(wrs []provider.RecvWR, maxSGE int) (int, error) {
	return r.post(wrs, maxSGE, true)
}

// post is Put for each of wrs, then Flush if publish: one body for both,
// so that the batch writes what the single requests do.
func (r *rq) post(wrs []provider.RecvWR, maxSGE int, publish bool) (int, error) {
	if r.q.buf == nil {
		if len(wrs) == 0 {
			return 0, nil
		}
		return 0, errClosed
	}
	// maxSGE SGEs fit a slot: open checked the slot size against the
	// QP's max_recv_sge, and mapSRQ caps an SRQ's at what fits.
	lim := uint64(r.maxSGE)
	if maxSGE >= 0 && uint64(maxSGE) < lim {
		lim = uint64(maxSGE)
	}
	p := r.pending
	n := 0
	var err error
	for ; n < len(wrs); n++ {
		wr := &wrs[n]
		sges := wr.SGE
		if uint64(len(sges)) > lim {
			err = (*sgeRefusal)(r)
			break
		}
		if !r.q.take(p) {
			err = provider.ErrFull
			break
		}
		// The fields librxe's rxe_post_one_recv sets, and no others: the
		// reserved words and the SGE entries past n keep what the slot
		// held, which the kernel does not read (clearing the slot cost a
		// quarter of a one-SGE post). The slot is found by its offset,
		// each piece checked against the mapping by mem.At. The SGEs are
		// summed as they are copied, as librxe does; a sum past 4 GiB
		// (which librxe wraps) gives the slot back unpublished.
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
	if publish && p != r.published {
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

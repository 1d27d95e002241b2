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

func (r *rq) Put(wr *provider.RecvWR) error {
	if r.q.buf == nil {
		return errClosed
	}
	sges := wr.SGE
	// maxSGE SGEs fit a slot: open checked the slot size against the
	// QP's max_recv_sge, and mapSRQ caps an SRQ's at what fits.
	if uint64(len(sges)) > uint64(r.maxSGE) {
		return (*sgeRefusal)(r)
	}
	var total uint64
	for i := range sges {
		total += uint64(sges[i].Length)
	}
	if total > math.MaxUint32 {
		return (*lengthRefusal)(r)
	}
	p := r.pending
	if !r.q.take(p) {
		return provider.ErrFull
	}
	// The fields librxe's rxe_post_one_recv sets, and no others: the
	// reserved words and the SGE entries past n keep what the slot held,
	// which the kernel does not read (clearing the slot cost a quarter of
	// a one-SGE post). The slot is found by its offset, each piece
	// checked against the mapping by mem.At.
	off := r.q.offset(p)
	w := mem.At[abi.RxeRecvWQE](r.q.buf, off)
	w.WrID = wr.ID
	w.Dma.Length = uint32(total)
	w.Dma.Resid = uint32(total)
	w.Dma.CurSGE = 0
	w.Dma.NumSGE = uint32(len(sges))
	w.Dma.SGEOffset = 0
	off += recvWQEHdr
	for i := range sges {
		*mem.At[abi.RxeSGE](r.q.buf, off+i*sgeSize) = abi.RxeSGE(sges[i])
	}
	r.pending = r.q.next(p)
	return nil
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

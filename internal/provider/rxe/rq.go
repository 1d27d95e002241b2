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
	n := len(wr.SGE)
	if uint64(n) > uint64(r.maxSGE) || recvWQEHdr+n*sgeSize > r.q.elemSize() {
		return fmt.Errorf("rxe: receive request with %d SGEs, at most %d: %w", n, r.maxSGE, provider.ErrInvalid)
	}
	var total uint64
	for i := range wr.SGE {
		total += uint64(wr.SGE[i].Length)
	}
	if total > math.MaxUint32 {
		return fmt.Errorf("rxe: receive request of %d bytes: %w", total, provider.ErrInvalid)
	}
	if !r.q.take(r.pending) {
		return provider.ErrFull
	}
	next := r.q.next(r.pending)
	s := r.q.slot(r.pending)
	// The fields librxe's rxe_post_one_recv sets, and no others: the
	// reserved words and the SGE entries past n keep what the slot held,
	// which the kernel does not read (clearing the slot cost a quarter of
	// a one-SGE post).
	w := mem.At[abi.RxeRecvWQE](s, 0)
	w.WrID = wr.ID
	w.Dma.Length = uint32(total)
	w.Dma.Resid = uint32(total)
	w.Dma.CurSGE = 0
	w.Dma.NumSGE = uint32(n)
	w.Dma.SGEOffset = 0
	for i := range wr.SGE {
		*mem.At[abi.RxeSGE](s, recvWQEHdr+i*sgeSize) = abi.RxeSGE{
			Addr:   wr.SGE[i].Addr,
			Length: wr.SGE[i].Length,
			LKey:   wr.SGE[i].LKey,
		}
	}
	r.pending = next
	return nil
}

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

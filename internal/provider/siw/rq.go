package siw

import (
	"fmt"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// RQ is the driver's receive queue as a type uverbs names: its Put,
// reached through a type switch rather than the provider interface, reads
// the caller's own request, which an interface call would make escape.
type RQ = recvQueue

// recvQueue is the mapped RQ of a QP, or an SRQ. A QP without receive
// queue has one with no elements.
type recvQueue struct {
	dev    provider.Device
	buf    []byte
	num    uint32
	maxSGE int
	put    uint32 // slot of the next Put
}

// Put writes wr in the next element and publishes it (its valid flag).
func (q *recvQueue) Put(wr *provider.RecvWR) error {
	_, err := q.Post(mem.One(wr), q.maxSGE)
	return err
}

// Post puts wrs in order, each of at most maxSGE SGEs: Put for each in
// one call, which is what uverbs' PostRecv does with it (Flush has
// nothing to do). It returns how many it put and the refusal of the next
// one. A request of more than maxSGE SGEs is refused as one of more than
// the queue takes (uverbs formats its own error). Put is Post of one: one
// body for both, so that the batch writes what the single requests do.
func (q *recvQueue) Post(wrs []provider.RecvWR, maxSGE int) (int, error) {
	put, buf := q.put, q.buf
	lim := min(maxSGE, q.maxSGE)
	n := 0
	var err error
	for ; n < len(wrs); n++ {
		wr := &wrs[n]
		sge := wr.SGE
		// One comparison for the element's bounds and for a queue with
		// no elements (its buf is empty); the views below are then
		// within the element's constant size.
		off := int(put) * rqeSize
		if off+rqeSize > len(buf) {
			err = provider.ErrFull
			break
		}
		e := buf[off : off+rqeSize]
		word := wordAt(e, 0)
		if word.Load()&abi.SIW_WQE_VALID != 0 {
			err = provider.ErrFull
			break
		}
		// The kernel takes receive elements without scatter entries
		// (siw_post_receive does); rdma-core refuses them.
		if len(sge) > lim {
			err = (*sgeRefusal)(q)
			break
		}
		// The fields libsiw's siw_post_recv writes and no others: the
		// unused word and the SGE entries past num_sge keep what the
		// element held, which the kernel does not read (siw_rqe_get
		// copies num_sge entries).
		rqe := mem.At[abi.SiwRQE](e, 0)
		rqe.ID = wr.ID
		sges := rqe.SGE[:len(sge)] // maxSGE is at most SIW_MAX_SGE
		for i := range sge {
			sges[i] = abi.SiwSGE{LAddr: sge[i].Addr, Length: sge[i].Length, LKey: sge[i].LKey}
		}
		// Publish flags and num_sge in one store, a release after the
		// body; the opcode byte is the kernel's. (The send queue's
		// publishing store stays sequentially consistent: Flush loads
		// the previous element's flag after it to decide on the
		// doorbell, which a release store could pass.)
		mem.StoreRelease(word, abi.SIW_WQE_VALID|uint32(len(sge))<<16)
		put++
		if put == q.num {
			put = 0
		}
	}
	q.put = put
	return n, err
}

// sgeRefusal is Put's refusal of a request with more scatter entries
// than the queue takes: the queue itself as an error, which costs Put no
// call (a call to format the error gave Put a stack frame; package uverbs
// checks the count before Put and formats its own error). It reads only
// maxSGE, which never changes.
type sgeRefusal recvQueue

func (r *sgeRefusal) Error() string {
	return fmt.Sprintf("siw: receive request with more SGEs than the queue takes (%d): %v", r.maxSGE, provider.ErrInvalid)
}

func (r *sgeRefusal) Unwrap() error { return provider.ErrInvalid }

// Flush does nothing: siw has no receive doorbell, the kernel looks at
// the ring when a message arrives.
func (q *recvQueue) Flush() error { return nil }

func (q *recvQueue) Close() error { return unmap(q.dev, &q.buf) }

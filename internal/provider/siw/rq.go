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

func (q *recvQueue) Put(wr *provider.RecvWR) error {
	if q.num == 0 {
		return provider.ErrFull
	}
	// One bounds check for the element; the views below are then
	// within its constant size.
	off := int(q.put) * rqeSize
	e := q.buf[off : off+rqeSize]
	word := wordAt(e, 0)
	if word.Load()&abi.SIW_WQE_VALID != 0 {
		return provider.ErrFull
	}
	// The kernel takes receive elements without scatter entries
	// (siw_post_receive does); rdma-core refuses them.
	if len(wr.SGE) > q.maxSGE {
		return fmt.Errorf("siw: receive request with %d SGEs, the queue takes %d: %w", len(wr.SGE), q.maxSGE, provider.ErrInvalid)
	}
	// The fields libsiw's siw_post_recv writes and no others: the unused
	// word and the SGE entries past num_sge keep what the element held,
	// which the kernel does not read (siw_rqe_get copies num_sge entries).
	rqe := mem.At[abi.SiwRQE](e, 0)
	rqe.ID = wr.ID
	sges := rqe.SGE[:len(wr.SGE)] // maxSGE is at most SIW_MAX_SGE
	for i := range sges {
		s := &wr.SGE[i]
		sges[i] = abi.SiwSGE{LAddr: s.Addr, Length: s.Length, LKey: s.LKey}
	}
	// Publish flags and num_sge in one store, a release after the body;
	// the opcode byte is the kernel's. (The send queue's publishing store
	// stays sequentially consistent: Flush loads the previous element's
	// flag after it to decide on the doorbell, which a release store
	// could pass.)
	mem.StoreRelease(word, abi.SIW_WQE_VALID|uint32(len(wr.SGE))<<16)
	q.put++
	if q.put == q.num {
		q.put = 0
	}
	return nil
}

// Flush does nothing: siw has no receive doorbell, the kernel looks at
// the ring when a message arrives.
func (q *recvQueue) Flush() error { return nil }

func (q *recvQueue) Close() error { return unmap(q.dev, &q.buf) }

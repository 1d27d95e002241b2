package siw

import (
	"fmt"
	"sync/atomic"
	"unsafe"

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
	// off is the byte offset of the next Put's element: Post addresses
	// the element with it, with no multiply, and keeps no slot index
	// beside it (the loop has too few registers).
	off uintptr
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
	buf := q.buf
	if buf == nil {
		return 0, q.none(wrs) // no elements, or closed
	}
	// The elements are written without a bounds check, which would keep
	// the mapping's length live in a register too (the SGE copy then had
	// too few and spilled): mapQP mapped num elements (mapQueue checked
	// the length), and off, a multiple of rqeSize, stays below num of
	// them.
	elems := unsafe.Pointer(unsafe.SliceData(buf))
	off := q.off
	lim := min(maxSGE, q.maxSGE)
	n := 0
	var err error
	for ; n < len(wrs); n++ {
		wr := &wrs[n]
		e := unsafe.Add(elems, off)
		word := (*uint32)(unsafe.Add(e, flagsWord))
		if atomic.LoadUint32(word)&abi.SIW_WQE_VALID != 0 {
			err = provider.ErrFull
			break
		}
		// The kernel takes receive elements without scatter entries
		// (siw_post_receive does); rdma-core refuses them.
		sge := wr.SGE
		if len(sge) > lim {
			err = (*sgeRefusal)(q)
			break
		}
		// The fields libsiw's siw_post_recv writes and no others: the
		// unused word and the SGE entries past num_sge keep what the
		// element held, which the kernel does not read (siw_rqe_get
		// copies num_sge entries).
		rqe := (*abi.SiwRQE)(e)
		rqe.ID = wr.ID
		// One entry, the common request, is written on its own, with the
		// count a constant, as libsiw's siw_post_recv does (the loop's
		// setup and count cost it a dozen instructions).
		if len(sge) == 1 {
			s := &sge[0]
			rqe.SGE[0] = abi.SiwSGE{LAddr: s.Addr, Length: s.Length, LKey: s.LKey}
			mem.StoreRelease((*atomic.Uint32)(unsafe.Pointer(word)), abi.SIW_WQE_VALID|1<<16)
		} else {
			q.putSGEs(rqe, sge, word)
		}
		off += rqeSize
		if off == uintptr(q.num)*rqeSize {
			off = 0
		}
	}
	q.off = off
	return n, err
}

// putSGEs writes the entries of sge, any number up to the queue's
// maximum, into rqe and publishes it by its flags word: Post's general
// way, the way of every count but one.
func (q *recvQueue) putSGEs(rqe *abi.SiwRQE, sge []provider.SGE, word *uint32) {
	// The entries by one byte offset into both arrays (their elements
	// have one size, checked below): an index scaled by 16 took one
	// more register than Post's loop has. len(sge) is at most Post's
	// lim, at most SIW_MAX_SGE.
	src, dst := unsafe.Pointer(unsafe.SliceData(sge)), unsafe.Pointer(&rqe.SGE)
	end := uintptr(len(sge)) * sgeSize
	for o := uintptr(0); o < end; o += sgeSize {
		s, d := (*provider.SGE)(unsafe.Add(src, o)), (*abi.SiwSGE)(unsafe.Add(dst, o))
		*d = abi.SiwSGE{LAddr: s.Addr, Length: s.Length, LKey: s.LKey}
	}
	// Publish flags and num_sge in one store, a release after the body;
	// the opcode byte is the kernel's. (The send queue's publishing
	// store stays sequentially consistent: Flush loads the previous
	// element's flag after it to decide on the doorbell, which a
	// release store could pass.)
	mem.StoreRelease((*atomic.Uint32)(unsafe.Pointer(word)), abi.SIW_WQE_VALID|uint32(end/sgeSize)<<16)
}

// sgeSize is the size of an SGE in a request and in an element: Post
// walks both by one offset. (The index is out of range, and the package
// does not build, if the sizes differ.)
const sgeSize = unsafe.Sizeof(abi.SiwSGE{})

var _ = [1]struct{}{}[unsafe.Sizeof(provider.SGE{})-sgeSize]

// none is Post's answer for a queue without elements (a QP created with
// no receive queue, or a closed one): every request finds it full.
func (q *recvQueue) none(wrs []provider.RecvWR) error {
	if len(wrs) == 0 {
		return nil
	}
	return provider.ErrFull
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

package rxe

import (
	"math/bits"
	"unsafe"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// CQ is the driver's CQ as a type package cq names: its Poll, reached
// through a type switch rather than the provider.CQ interface, writes
// straight into the caller's completions, which an interface call would
// make escape.
type CQ = cq

// cq is a completion queue: the kernel produces ib_uverbs_wc entries, we
// consume them.
type cq struct {
	q queue
	// at is our consumer index as the byte offset of its slot from slot
	// 0 (the index is at>>log2): the only writer of q.cons. Offsets let
	// the poll loop address a slot with no multiply, and step with an
	// add and a mask.
	at uint32
	// end is the producer index as last loaded, an offset as at is. The
	// kernel only moves it forward and the load was an acquire, so the
	// slots before it are written: Poll loads the producer again only
	// when it has caught up with this copy, which keeps the kernel's
	// cache line out of every Poll while completions are queued.
	end uint32
	// ring masks an offset: the ring's bytes, (mask+1)<<log2, less one
	// (attach refused rings of 4 GiB and more).
	ring uint32
	// slots is the address of slot 0, past the ring's header, or nil
	// once closed: loaded whole, it leaves Poll one add per slot's
	// address, where the compiler folded a base and the header's size
	// computed in the poll into two.
	slots unsafe.Pointer
	// kept reports that Take moved at past slots the kernel has not
	// been given back: the next Poll or Release stores the consumer.
	kept bool
}

// restart takes the consumer index from the ring c.q maps, a new one or
// a resized one, and loads the producer on the next poll.
func (c *cq) restart() {
	c.at = c.q.cons.Load() * c.q.size // attach checked it is within mask
	c.end = c.at
	c.ring = (c.q.mask+1)*c.q.size - 1
	c.slots = unsafe.Add(unsafe.Pointer(unsafe.SliceData(c.q.buf)), queueHdr)
	c.kept = false
}

// index is the ring index of the slot at offset at.
func (c *cq) index(at uint32) uint32 { return at >> (c.q.log2 & 31) }

// Poll is PollStatus for provider.CQ.
func (c *cq) Poll(wcs []provider.WC) int {
	n, _ := c.PollStatus(wcs)
	return n
}

// PollStatus copies up to len(wcs) completions and hands all their slots back
// with one store after the last copy (with those Take kept). Go's atomic
// store is sequentially consistent (an XCHG on amd64, where rdma-core's
// release store is a plain MOV), so one per poll instead of one per
// completion is most of what a poll of many costs. The loop keeps the
// indices and the ring's geometry in locals: it is the hot path of every
// busy-wait.
//
// It also reports whether any completion it moved failed: package cq,
// which calls it directly, then clears what a failure leaves undefined,
// and otherwise need not look at each status again.
func (c *cq) PollStatus(wcs []provider.WC) (int, bool) {
	// An empty CQ, the busy-wait's common answer, is found before the
	// loop's locals are set up (the ring's slice too): one acquire load
	// of the producer. A closed queue has no producer word.
	if at := c.at; at == c.end {
		p := c.q.prod
		if p == nil {
			return 0, false
		}
		end := (p.Load() & c.q.mask) * c.q.size // acquire: the slots are written
		if at == end {
			// c.end is at already. Slots Take kept go back now, as
			// they would after a poll that found completions (written
			// out: Release's inline mark would cost an instruction).
			if c.kept {
				c.kept = false
				mem.StoreRelease(c.q.cons, c.index(at))
			}
			return 0, false
		}
		c.end = end
	}
	// Here the ring holds a completion at least (at is short of end),
	// so the loop copies one before it tests for more.
	slots := c.slots
	if slots == nil {
		return 0, false // closed
	}
	if len(wcs) == 0 {
		if c.kept {
			c.kept = false
			mem.StoreRelease(c.q.cons, c.index(c.at))
		}
		return 0, false
	}
	// The loop keeps the offsets and the geometry in locals. The slots
	// are read without a bounds check, which would keep the mapping's
	// length live in a register too (the loop has too few): attach
	// checked that the ring's slots, each at least a WC, fit the mapping
	// after its header, and at is a slot's offset within ring (masked
	// here once, then by each step).
	size, ring := uintptr(c.q.size), uintptr(c.ring)
	at, end := uintptr(c.at)&ring, uintptr(c.end)
	// The completions are written through wc, stepped by the WC's 48
	// bytes beside n: an add where &wcs[n] took a multiply and an add,
	// and no division by 48 after the loop (counting by an offset alone
	// cost a poll of one more than it saved). wc steps only when a next
	// completion will be written, so it never points past wcs.
	wc := unsafe.SliceData(wcs)
	n, status := 0, uint32(0)
	for {
		// The kernel's ib_uverbs_wc has provider.WC's layout
		// (TestWCLayout), so the slot is copied whole, in a few wide
		// moves; only the immediate data changes, to host order.
		*wc = *(*provider.WC)(unsafe.Add(slots, at))
		if wc.Flags&abi.IB_WC_WITH_IMM != 0 && !isBigEndian {
			wc.ImmData = bits.ReverseBytes32(wc.ImmData) // beSwap, whose inline mark cost an instruction
		}
		status |= wc.Status
		at = (at + size) & ring
		n++
		if n == len(wcs) {
			break
		}
		wc = (*provider.WC)(unsafe.Add(unsafe.Pointer(wc), unsafe.Sizeof(provider.WC{})))
		if at == end {
			end = uintptr((c.q.prod.Load() & c.q.mask) * c.q.size) // acquire: the slots are written
			if at == end {
				break
			}
		}
	}
	c.end = uint32(end)
	c.at = uint32(at)
	c.kept = false
	mem.StoreRelease(c.q.cons, c.index(uint32(at))) // we are done reading the slots
	return n, status != 0
}

// Take reads one completion and keeps its slot until Release, so that a
// run of Takes costs one store of the consumer index in all. It is
// PollStatus of one without the store, on its own rather than through a
// flag PollStatus would test on every call.
func (c *cq) Take(wc *provider.WC) bool {
	at, end := c.at, c.end
	if at == end {
		p := c.q.prod
		if p == nil {
			return false // closed
		}
		end = (p.Load() & c.q.mask) * c.q.size // acquire: the slot is written
		if at == end {
			return false
		}
		c.end = end
	}
	slots := c.slots
	if slots == nil {
		return false // closed
	}
	at &= c.ring // as in PollStatus: within the ring whatever c.at held
	*wc = *(*provider.WC)(unsafe.Add(slots, at))
	if wc.Flags&abi.IB_WC_WITH_IMM != 0 {
		wc.ImmData = beSwap(wc.ImmData)
	}
	c.at = (at + c.q.size) & c.ring
	c.kept = true
	return true
}

// Release stores the consumer index Take moved, if it moved.
func (c *cq) Release() {
	if c.kept && c.q.buf != nil {
		c.kept = false
		mem.StoreRelease(c.q.cons, c.index(c.at)) // we are done reading the slots
	}
}

// Arm reports false: rxe has no notification flag in the ring, the
// kernel arms the CQ on REQ_NOTIFY_CQ.
func (c *cq) Arm(solicitedOnly bool) bool { return false }

// Resize switches to the new ring, as rdma-core's rxe_resize_cq does:
// rxe_queue_resize copied the completions between the old ring's consumer
// and producer indices into the new ring, which starts with its own
// indices, and the old mapping stays valid until we unmap it (the kernel
// frees the old buffer with its last mapping).
func (c *cq) Resize(resp []byte) error {
	if len(resp) < resizeCQRespSize {
		return shortResp("RESIZE_CQ", len(resp), resizeCQRespSize)
	}
	if c.q.buf == nil {
		return errClosed
	}
	var nq queue
	if err := nq.open(c.q.dev, mmInfo(resp, 0), wcSize, "resized CQ"); err != nil {
		return err
	}
	old := c.q
	c.q = nq
	c.restart()
	return old.close()
}

func (c *cq) Close() error {
	c.slots = nil
	return c.q.close()
}

package rxe

import (
	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// cq is a completion queue: the kernel produces ib_uverbs_wc entries, we
// consume them.
type cq struct {
	q    queue
	cons uint32 // our consumer index, the only writer of q.cons
	// prod is the producer index as last loaded. The kernel only moves
	// it forward and the load was an acquire, so the slots before it are
	// written: Next loads the producer again only when it has caught up
	// with this copy, which keeps the kernel's cache line out of every
	// Next while completions are queued.
	prod uint32
}

// Next copies the oldest completion out of its slot and only then hands
// the slot back: the kernel may overwrite it as soon as it sees the new
// consumer index.
func (c *cq) Next(wc *provider.WC) bool {
	if c.q.buf == nil || !c.take(wc) {
		return false
	}
	c.q.cons.Store(c.cons) // release: we are done reading the slot
	return true
}

// Poll copies up to len(wcs) completions and hands all their slots back
// with one store after the last copy. Go's atomic store is sequentially
// consistent (an XCHG on amd64, where rdma-core's release store is a
// plain MOV), so one per poll instead of one per completion is most of
// what a poll of many costs. The loop keeps the indices and the ring's
// geometry in locals: it is the hot path of every busy-wait.
func (c *cq) Poll(wcs []provider.WC) int {
	buf := c.q.buf
	if buf == nil {
		return 0
	}
	cons, prod, mask, log2 := c.cons, c.prod, c.q.mask, c.q.log2
	n := 0
	for ; n < len(wcs); n++ {
		if cons == prod {
			prod = c.q.prod.Load() & mask // acquire: the slots are written
			c.prod = prod
			if cons == prod {
				break
			}
		}
		// copyWC by hand: the compiler does not inline it, and a call
		// per completion is a fifth of the loop.
		u, wc := mem.At[abi.WC](buf, queueHdr+int(cons)<<log2), &wcs[n]
		flags, imm := u.WCFlags, u.Ex
		if flags&abi.IB_WC_WITH_IMM != 0 {
			imm = beSwap(imm)
		}
		wc.ID = u.WrID
		wc.Status = u.Status
		wc.Opcode = u.Opcode
		wc.VendorErr = u.VendorErr
		wc.ByteLen = u.ByteLen
		wc.ImmData = imm
		wc.QPNum = u.QPNum
		wc.SrcQP = u.SrcQP
		wc.Flags = flags
		wc.PKeyIndex = u.PKeyIndex
		wc.SLID = u.SLID
		wc.SL = u.SL
		wc.DLIDPathBits = u.DLIDPathBits
		wc.PortNum = u.PortNum
		cons = (cons + 1) & mask
	}
	if n > 0 {
		c.cons = cons
		c.q.cons.Store(cons) // release: we are done reading the slots
	}
	return n
}

// take copies the oldest completion into wc and moves the private
// consumer index past it, without publishing it.
func (c *cq) take(wc *provider.WC) bool {
	if c.cons == c.prod {
		c.prod = c.q.prod.Load() & c.q.mask // acquire: the slots are written
		if c.cons == c.prod {
			return false
		}
	}
	copyWC(wc, mem.At[abi.WC](c.q.slot(c.cons), 0))
	c.cons = c.q.next(c.cons)
	return true
}

// copyWC copies a completion field by field, straight from the slot into
// wc: building a WC in a temporary and copying it costs more than the
// rest of a poll.
func copyWC(wc *provider.WC, u *abi.WC) {
	flags := u.WCFlags
	imm := u.Ex
	if flags&abi.IB_WC_WITH_IMM != 0 {
		// imm_data is the packet's big-endian bytes; invalidate_rkey
		// (IB_WC_WITH_INVALIDATE) shares the word but is host order.
		imm = beSwap(imm)
	}
	wc.ID = u.WrID
	wc.Status = u.Status
	wc.Opcode = u.Opcode
	wc.VendorErr = u.VendorErr
	wc.ByteLen = u.ByteLen
	wc.ImmData = imm
	wc.QPNum = u.QPNum
	wc.SrcQP = u.SrcQP
	wc.Flags = flags
	wc.PKeyIndex = u.PKeyIndex
	wc.SLID = u.SLID
	wc.SL = u.SL
	wc.DLIDPathBits = u.DLIDPathBits
	wc.PortNum = u.PortNum
}

// Arm reports false: rxe has no notification flag in the ring, the
// kernel arms the CQ on REQ_NOTIFY_CQ.
func (c *cq) Arm(solicitedOnly bool) bool { return false }

func (c *cq) Close() error { return c.q.close() }

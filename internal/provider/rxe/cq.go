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
// consumer index. The fields are copied one by one, straight from the
// slot into wc: building a WC in a temporary and copying it costs more
// than the rest of Next.
func (c *cq) Next(wc *provider.WC) bool {
	if c.q.buf == nil {
		return false
	}
	if c.cons == c.prod {
		c.prod = c.q.prod.Load() & c.q.mask // acquire: the slots are written
		if c.cons == c.prod {
			return false
		}
	}
	u := mem.At[abi.WC](c.q.slot(c.cons), 0)
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
	c.cons = c.q.next(c.cons)
	c.q.cons.Store(c.cons) // release: we are done reading the slot
	return true
}

// Arm reports false: rxe has no notification flag in the ring, the
// kernel arms the CQ on REQ_NOTIFY_CQ.
func (c *cq) Arm(solicitedOnly bool) bool { return false }

func (c *cq) Close() error { return c.q.close() }

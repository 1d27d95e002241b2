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
}

// Next copies the oldest completion out of its slot and only then hands
// the slot back: the kernel may overwrite it as soon as it sees the new
// consumer index.
func (c *cq) Next(wc *provider.WC) bool {
	if c.q.buf == nil {
		return false
	}
	if c.cons == c.q.prod.Load()&c.q.mask { // acquire: the slot is written
		return false
	}
	u := *mem.At[abi.WC](c.q.slot(c.cons), 0)
	imm := u.Ex
	if u.WCFlags&abi.IB_WC_WITH_IMM != 0 {
		// imm_data is the packet's big-endian bytes; invalidate_rkey
		// (IB_WC_WITH_INVALIDATE) shares the word but is host order.
		imm = beSwap(imm)
	}
	*wc = provider.WC{
		ID:           u.WrID,
		Status:       u.Status,
		Opcode:       u.Opcode,
		VendorErr:    u.VendorErr,
		ByteLen:      u.ByteLen,
		ImmData:      imm,
		QPNum:        u.QPNum,
		SrcQP:        u.SrcQP,
		Flags:        u.WCFlags,
		PKeyIndex:    u.PKeyIndex,
		SLID:         u.SLID,
		SL:           u.SL,
		DLIDPathBits: u.DLIDPathBits,
		PortNum:      u.PortNum,
	}
	c.cons = c.q.next(c.cons)
	c.q.cons.Store(c.cons) // release: we are done reading the slot
	return true
}

// Arm reports false: rxe has no notification flag in the ring, the
// kernel arms the CQ on REQ_NOTIFY_CQ.
func (c *cq) Arm(solicitedOnly bool) bool { return false }

func (c *cq) Close() error { return c.q.close() }

package rpma

import (
	"github.com/purerdma/purerdma/cq"
)

// CompletionOp is the operation of a Completion (enum rpma_op, librpma
// 0.11).
type CompletionOp int

// Completion operations.
const (
	OpRead CompletionOp = iota
	OpWrite
	OpFlush
	OpSend
	OpRecv
	OpRecvRDMAWithImm
)

// Completion is librpma 0.11's completion (struct rpma_completion),
// kept for code written against that API.
type Completion struct {
	OpContext uint64
	Op        CompletionOp
	ByteLen   uint32
	Status    cq.Status
	Flags     cq.Flags
	Imm       uint32 // host byte order
}

// GetCompletion returns the next completion in librpma 0.11's form
// (rpma_cq_get_completion, deprecated there): GetWC of one completion,
// translated; with no completion in the CQ it returns ErrNoCompletion
// (RPMA_E_NO_COMPLETION), as GetWC does. An emulated flush is an RDMA
// read on the wire, so its completion reports OpRead; a native one
// reports OpFlush, and a native atomic write OpWrite. When the status is not success only OpContext is
// valid. An opcode with no CompletionOp is ErrUnsupported.
func (c *CQ) GetCompletion() (Completion, error) {
	var wc [1]cq.WC
	if _, err := c.GetWC(wc[:]); err != nil {
		return Completion{}, err
	}
	w := &wc[0]
	if w.Status != cq.Success {
		return Completion{OpContext: w.ID, Status: w.Status}, nil
	}
	cmpl := Completion{OpContext: w.ID, ByteLen: w.ByteLen, Status: w.Status, Flags: w.Flags, Imm: w.Imm}
	switch w.Opcode {
	case cq.OpRDMARead:
		cmpl.Op = OpRead
	case cq.OpRDMAWrite, cq.OpAtomicWrite:
		cmpl.Op = OpWrite
	case cq.OpFlush:
		cmpl.Op = OpFlush
	case cq.OpSend:
		cmpl.Op = OpSend
	case cq.OpRecv:
		cmpl.Op = OpRecv
	case cq.OpRecvRDMAWithImm:
		cmpl.Op = OpRecvRDMAWithImm
	default:
		return Completion{}, unsupported("completion opcode %s", w.Opcode)
	}
	return cmpl, nil
}

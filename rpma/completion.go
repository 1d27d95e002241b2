package rpma

import (
	"fmt"

	"github.com/purerdma/purerdma/cq"
)

// Op is the operation of a Completion (enum rpma_op, librpma 0.11).
type Op int

// Completion operations.
const (
	OpRead Op = iota
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
	Op        Op
	ByteLen   uint32
	Status    cq.Status
	Flags     cq.Flags
	Imm       uint32 // host byte order
}

// GetCompletion returns the next completion in librpma 0.11's form
// (rpma_cq_get_completion, deprecated there): GetWC of one completion,
// translated. An emulated flush is an RDMA read on the wire, so its
// completion reports OpRead; a native one reports OpFlush, and a native
// atomic write OpWrite. When the status is not success only OpContext is
// valid. An opcode with no Op is ErrNoSupp.
func (c *CQ) GetCompletion() (Completion, error) {
	if c == nil {
		return Completion{}, ErrInval
	}
	var wc [1]cq.WC
	if err := c.GetWC(1, wc[:], nil); err != nil {
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
		return Completion{}, fmt.Errorf("rpma: completion opcode %s: %w", w.Opcode, ErrNoSupp)
	}
	return cmpl, nil
}

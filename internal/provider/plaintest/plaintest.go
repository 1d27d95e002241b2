// Package plaintest checks the drivers' PutPlain, their batch path for the
// common send requests, against their Put: the cases and the loop the
// drivers' tests share.
package plaintest

import (
	"fmt"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

// PlainSQ is a driver's send queue with a batch path for the common
// requests (PutPlain) beside Put.
type PlainSQ interface {
	PutPlain(wrs []provider.SendWR) (int, error)
	Put(wr *provider.SendWR) error
	Flush() error
	SetPlainOps(ops uint32)
}

// A PlainBatch is a case of CheckPutPlain: a batch, the opcodes uverbs
// gives the driver as plain (SetPlainOps), and how many requests PutPlain
// must put before it stops.
type PlainBatch struct {
	Name string
	Ops  uint32
	WRs  []provider.SendWR
	Want int
}

// PlainOpsRC are the opcodes uverbs makes plain on an RC QP that may have
// reads outstanding (uverbs.plainOpsFor), as bits.
const PlainOpsRC = 1<<abi.IB_UVERBS_WR_SEND | 1<<abi.IB_UVERBS_WR_SEND_WITH_IMM | 1<<abi.IB_UVERBS_WR_SEND_WITH_INV |
	1<<abi.IB_UVERBS_WR_LOCAL_INV | 1<<abi.IB_UVERBS_WR_RDMA_WRITE | 1<<abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM |
	1<<abi.IB_UVERBS_WR_RDMA_READ

// PlainSend and the requests made from it are the batches' requests.
var PlainSend = provider.SendWR{ID: 1, Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_SIGNALED,
	SGE: []provider.SGE{{Addr: 0x1000, Length: 100, LKey: 0x55}}}

// PlainWith is PlainSend changed by f.
func PlainWith(f func(*provider.SendWR)) provider.SendWR {
	wr := PlainSend
	f(&wr)
	return wr
}

var (
	PlainRead = PlainWith(func(w *provider.SendWR) {
		w.Opcode, w.RemoteAddr, w.RKey = abi.IB_UVERBS_WR_RDMA_READ, 0x8000, 7
	})
	PlainWrite = PlainWith(func(w *provider.SendWR) {
		w.Opcode, w.RemoteAddr, w.RKey, w.Flags = abi.IB_UVERBS_WR_RDMA_WRITE, 0x9000, 8, 0
	})
)

// PlainBatches are the cases every driver shares: a batch of sends,
// writes and reads with other, taken as the driver's third request; an
// empty batch; reads not plain; no plain opcodes; inline data (none: the
// drivers copy no memory); a flag uverbs does not know; an opcode past
// the table; one SGE more than maxSGE.
func PlainBatches(third provider.SendWR, maxSGE int) []PlainBatch {
	return []PlainBatch{
		{"common", PlainOpsRC, []provider.SendWR{PlainSend, PlainWrite, third, PlainRead}, 4},
		{"empty", PlainOpsRC, nil, 0},
		{"reads not plain", PlainOpsRC &^ (1 << abi.IB_UVERBS_WR_RDMA_READ), []provider.SendWR{PlainSend, PlainWrite, PlainRead}, 2},
		{"no plain ops", 0, []provider.SendWR{PlainSend}, 0},
		{"inline", PlainOpsRC, []provider.SendWR{PlainSend, PlainWith(func(w *provider.SendWR) { w.Flags |= abi.IB_SEND_INLINE; w.SGE = nil })}, 1},
		{"unknown flag", PlainOpsRC, []provider.SendWR{PlainWith(func(w *provider.SendWR) { w.Flags |= 1 << 5 })}, 0},
		{"opcode 40", PlainOpsRC, []provider.SendWR{PlainSend, PlainWith(func(w *provider.SendWR) { w.Opcode = 40 })}, 1},
		{"too many SGEs", PlainOpsRC, []provider.SendWR{PlainSend, PlainSend,
			PlainWith(func(w *provider.SendWR) { w.SGE = make([]provider.SGE, maxSGE+1) })}, 2},
	}
}

// CheckPutPlain checks a driver's PutPlain against its Put, request by
// request, on the two queues twin makes, which start with the same
// bytes: PutPlain must put the same requests, stop at the first one it
// leaves to the caller (the case's count) saying so (provider.ErrStop),
// and flush unless it stopped there; same must find the same bytes and state in both. The caller
// then puts the request PutPlain stopped at with Put, which must take or
// refuse it as it does alone.
func CheckPutPlain(t *testing.T, cases []PlainBatch, twin func(t *testing.T) (batch, one PlainSQ, same func(t *testing.T))) {
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			batch, one, same := twin(t)
			batch.SetPlainOps(c.Ops)
			n, err := batch.PutPlain(c.WRs)
			var wantErr error
			if c.Want < len(c.WRs) {
				wantErr = provider.ErrStop
			}
			if n != c.Want || err != wantErr {
				t.Fatalf("PutPlain = %d, %v; want %d, %v", n, err, c.Want, wantErr)
			}
			for i := range n {
				if err := one.Put(&c.WRs[i]); err != nil {
					t.Fatalf("Put of request %d: %v", i, err)
				}
			}
			if n == len(c.WRs) { // PutPlain flushed
				if err := one.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			same(t)
			if n < len(c.WRs) {
				errBatch, errOne := batch.Put(&c.WRs[n]), one.Put(&c.WRs[n])
				if fmt.Sprint(errBatch) != fmt.Sprint(errOne) {
					t.Fatalf("Put after PutPlain = %v, Put alone = %v", errBatch, errOne)
				}
				same(t)
			}
		})
	}
}

package mlx5

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

// TestPutPlainBatch checks PutPlain against Put and Flush, request by
// request, on two QPs of their own contexts whose queues start with the
// same garbage: it must put the same requests, leaving the same bytes
// and state, stop at the first one it leaves to Put (a count written out
// per case), and flush unless it stopped there; Put then takes or
// refuses that request as it would alone.
func TestPutPlainBatch(t *testing.T) {
	sge := []provider.SGE{{Addr: 0x1000, Length: 100, LKey: 0x55}}
	send := provider.SendWR{ID: 1, Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_SIGNALED, SGE: sge}
	with := func(f func(*provider.SendWR)) provider.SendWR { wr := send; f(&wr); return wr }
	read := with(func(w *provider.SendWR) { w.Opcode, w.RemoteAddr, w.RKey = abi.IB_UVERBS_WR_RDMA_READ, 0x8000, 7 })
	write := with(func(w *provider.SendWR) {
		w.Opcode, w.RemoteAddr, w.RKey, w.Flags = abi.IB_UVERBS_WR_RDMA_WRITE, 0x9000, 8, 0
	})
	imm := with(func(w *provider.SendWR) {
		w.Opcode, w.Imm, w.Flags = abi.IB_UVERBS_WR_SEND_WITH_IMM, 0x01020304, abi.IB_SEND_SOLICITED
	})
	all := uint32(1<<abi.IB_UVERBS_WR_SEND | 1<<abi.IB_UVERBS_WR_SEND_WITH_IMM | 1<<abi.IB_UVERBS_WR_SEND_WITH_INV |
		1<<abi.IB_UVERBS_WR_LOCAL_INV | 1<<abi.IB_UVERBS_WR_RDMA_WRITE | 1<<abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM |
		1<<abi.IB_UVERBS_WR_RDMA_READ)
	tests := []struct {
		name string
		ops  uint32
		wrs  []provider.SendWR
		want int
	}{
		{"common", all, []provider.SendWR{send, write, read, imm}, 4},
		{"one", all, []provider.SendWR{write}, 1},
		{"empty", all, nil, 0},
		{"reads not plain", all &^ (1 << abi.IB_UVERBS_WR_RDMA_READ), []provider.SendWR{send, write, read, imm}, 2},
		{"no plain ops", 0, []provider.SendWR{send}, 0},
		{"local invalidate", all, []provider.SendWR{send, with(func(w *provider.SendWR) { w.Opcode = abi.IB_UVERBS_WR_LOCAL_INV })}, 1},
		{"inline", all, []provider.SendWR{send, with(func(w *provider.SendWR) { w.Flags |= abi.IB_SEND_INLINE; w.SGE = nil })}, 1},
		{"unknown flag", all, []provider.SendWR{with(func(w *provider.SendWR) { w.Flags |= 1 << 5 })}, 0},
		{"opcode 40", all, []provider.SendWR{send, with(func(w *provider.SendWR) { w.Opcode = 40 })}, 1},
		{"too many SGEs", all, []provider.SendWR{send, send, with(func(w *provider.SendWR) { w.SGE = make([]provider.SGE, 6) })}, 2},
		// The queue takes 12 (maxPost, pinned below).
		{"full", all, slices.Repeat([]provider.SendWR{send, write, imm, read}, 4), 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var qps [2]*qp
			for i := range qps {
				c := openCtx(t, newFakeDev(t), ucontextResp(true))
				qps[i] = newQP(t, c, qpOpts{sendWR: 8, sendSGE: 5, qpn: 0x123, bfreg: 1})
				qps[i].sq.Modified(abi.IB_QPS_RTS)
				garbage(qps[i].buf[qps[i].sq.off:qps[i].sq.end()])
			}
			batch, one := &qps[0].sq, &qps[1].sq
			if batch.maxPost != 12 {
				t.Fatalf("the send queue takes %d requests, want 12", batch.maxPost)
			}
			batch.SetPlainOps(tt.ops)
			n, err := batch.PutPlain(tt.wrs)
			if n != tt.want || err != nil {
				t.Fatalf("PutPlain = %d, %v; want %d, nil", n, err, tt.want)
			}
			for i := range n {
				if err := one.Put(&tt.wrs[i]); err != nil {
					t.Fatalf("Put of request %d: %v", i, err)
				}
			}
			if n == len(tt.wrs) { // PutPlain flushed
				if err := one.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			same(t, batch, one)
			if n < len(tt.wrs) { // the caller puts the request it stopped at
				errBatch, errOne := batch.Put(&tt.wrs[n]), one.Put(&tt.wrs[n])
				if fmt.Sprint(errBatch) != fmt.Sprint(errOne) {
					t.Fatalf("Put after PutPlain = %v, Put alone = %v", errBatch, errOne)
				}
				same(t, batch, one)
			}
		})
	}
}

// same fails t unless the send queues hold the same bytes and state.
func same(t *testing.T, p, g *sendQueue) {
	t.Helper()
	if !bytes.Equal(p.qp.buf[p.off:p.end()], g.qp.buf[g.off:g.end()]) {
		t.Fatalf("queues differ\n% x\n% x", p.qp.buf[p.off:p.end()], g.qp.buf[g.off:g.end()])
	}
	type state struct {
		curPost, pending, head, dbSend uint32
		lastCtrl, lastSize, bfOffset   int
	}
	ps := state{p.curPost, p.pending, p.head.Load(), *p.dbSend, p.lastCtrl, p.lastSize, int(p.qp.bf.offset)}
	gs := state{g.curPost, g.pending, g.head.Load(), *g.dbSend, g.lastCtrl, g.lastSize, int(g.qp.bf.offset)}
	if ps != gs || !slices.Equal(p.wrid, g.wrid) || !slices.Equal(p.wqeHead, g.wqeHead) {
		t.Fatalf("state %+v, want %+v (wrid %v, %v)", ps, gs, p.wrid, g.wrid)
	}
}

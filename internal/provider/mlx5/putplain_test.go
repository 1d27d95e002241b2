package mlx5

import (
	"bytes"
	"slices"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/plaintest"
)

// TestPutPlainBatch checks PutPlain against Put and Flush
// (plaintest.CheckPutPlain), on two QPs of their own contexts whose
// queues start with the same garbage.
func TestPutPlainBatch(t *testing.T) {
	cases := append(plaintest.PlainBatches(plaintest.PlainWith(func(w *provider.SendWR) {
		w.Opcode, w.Imm, w.Flags = abi.IB_UVERBS_WR_SEND_WITH_IMM, 0x01020304, abi.IB_SEND_SOLICITED
	}), 5),
		plaintest.PlainBatch{Name: "one", Ops: plaintest.PlainOpsRC, WRs: []provider.SendWR{plaintest.PlainWrite}, Want: 1},
		plaintest.PlainBatch{Name: "local invalidate", Ops: plaintest.PlainOpsRC, WRs: []provider.SendWR{plaintest.PlainSend,
			plaintest.PlainWith(func(w *provider.SendWR) { w.Opcode = abi.IB_UVERBS_WR_LOCAL_INV })}, Want: 1},
		// The queue takes 12 (maxPost, pinned below).
		plaintest.PlainBatch{Name: "full", Ops: plaintest.PlainOpsRC, WRs: slices.Repeat([]provider.SendWR{plaintest.PlainSend}, 13), Want: 12},
	)
	plaintest.CheckPutPlain(t, cases, func(t *testing.T) (plaintest.PlainSQ, plaintest.PlainSQ, func(*testing.T)) {
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
		return batch, one, func(t *testing.T) { same(t, batch, one) }
	})
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

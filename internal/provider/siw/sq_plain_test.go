package siw

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/plaintest"
)

// TestSQPutPlain compares PutPlain's loop with putAny, the general path,
// which it must match byte for byte and in state: the same requests go to
// two QPs whose rings start with the same garbage, free flags aside,
// through PutPlain (every opcode plain) on one and putAny and Flush on
// the other, round the ring twice.
func TestSQPutPlain(t *testing.T) {
	sges := []provider.SGE{{Addr: 0x1000, Length: 100, LKey: 0x55}, {Addr: 0x2000, Length: 28, LKey: 0x66},
		{Addr: 0x3000, Length: 1 << 30, LKey: 0x77}, {Addr: 0x4000, Length: 4, LKey: 0x88}}
	tests := []struct {
		name string
		wr   provider.SendWR
	}{
		{"write", provider.SendWR{ID: 1, Opcode: abi.IB_UVERBS_WR_RDMA_WRITE, Flags: abi.IB_SEND_SIGNALED | abi.IB_SEND_FENCE,
			SGE: sges, RemoteAddr: 0x7f0012345678, RKey: 0xaabbccdd, Imm: 5}},
		{"read", provider.SendWR{ID: 2, Opcode: abi.IB_UVERBS_WR_RDMA_READ, Flags: abi.IB_SEND_SIGNALED, SGE: sges[1:2],
			RemoteAddr: 0x8008, RKey: 0x43}},
		{"send", provider.SendWR{ID: 3, Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_SOLICITED, SGE: sges[:2],
			RemoteAddr: 0x9999, RKey: 9, Imm: 0x01020304}},
		{"send no SGE", provider.SendWR{ID: 4, Opcode: abi.IB_UVERBS_WR_SEND}},
		{"send with invalidate", provider.SendWR{ID: 5, Opcode: abi.IB_UVERBS_WR_SEND_WITH_INV, SGE: sges[3:],
			RemoteAddr: 0x9999, RKey: 9, Imm: 0x1234}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, fast, _ := newQP(t, 4, 4)
			_, gen, _ := newQP(t, 4, 4)
			garbage(fast.buf, 4)
			copy(gen.buf, fast.buf)
			fast.SetPlainOps(plainOpsAll)
			for i := range 8 {
				wr := tt.wr
				wr.ID += uint64(i) << 32
				n, errFast := fast.PutPlain([]provider.SendWR{wr})
				errGen := gen.putAny(&wr)
				if errGen == nil {
					errGen = gen.Flush()
				}
				if n != 1 || errFast != nil || errGen != nil {
					t.Fatalf("request %d: PutPlain = %d, %v; putAny, Flush = %v", i, n, errFast, errGen)
				}
				if !bytes.Equal(fast.buf, gen.buf) {
					t.Fatalf("request %d: rings differ\nPutPlain % x\nputAny   % x", i, fast.buf, gen.buf)
				}
				if fast.put != gen.put || fast.first != gen.first || fast.pending != gen.pending {
					t.Fatalf("request %d: PutPlain left put %d first %d pending %d, putAny %d %d %d", i,
						fast.put, fast.first, fast.pending, gen.put, gen.first, gen.pending)
				}
				fast.consume(i % 4) // the kernel takes it
				gen.consume(i % 4)
			}
		})
	}
}

// garbage fills the n elements of buf with random bytes, their valid
// flags clear.
func garbage(buf []byte, n int) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for i := range n {
		wordAt(buf, i*sqeSize).Store(0)
	}
}

// TestSQPutPlainBatch checks PutPlain against Put (plaintest.CheckPutPlain),
// doorbells included.
func TestSQPutPlainBatch(t *testing.T) {
	cases := append(plaintest.PlainBatches(plaintest.PlainWith(func(w *provider.SendWR) {
		w.Opcode, w.Imm, w.Flags = abi.IB_UVERBS_WR_SEND_WITH_INV, 0x1234, abi.IB_SEND_SOLICITED
	}), 4),
		plaintest.PlainBatch{Name: "send with imm", Ops: plaintest.PlainOpsRC, WRs: []provider.SendWR{plaintest.PlainSend,
			plaintest.PlainWith(func(w *provider.SendWR) { w.Opcode = abi.IB_UVERBS_WR_SEND_WITH_IMM })}, Want: 1},
		plaintest.PlainBatch{Name: "read of two SGEs", Ops: plaintest.PlainOpsRC, WRs: []provider.SendWR{plaintest.PlainSend,
			plaintest.PlainWith(func(w *provider.SendWR) { *w = plaintest.PlainRead; w.SGE = make([]provider.SGE, 2) })}, Want: 1},
		plaintest.PlainBatch{Name: "fenced read", Ops: plaintest.PlainOpsRC, WRs: []provider.SendWR{
			plaintest.PlainWith(func(w *provider.SendWR) { *w = plaintest.PlainRead; w.Flags |= abi.IB_SEND_FENCE })}, Want: 0},
		// The ring holds 8.
		plaintest.PlainBatch{Name: "full", Ops: plaintest.PlainOpsRC, WRs: slices.Repeat([]provider.SendWR{plaintest.PlainSend}, 9), Want: 8},
	)
	plaintest.CheckPutPlain(t, cases, func(t *testing.T) (plaintest.PlainSQ, plaintest.PlainSQ, func(*testing.T)) {
		batchDev, batch, _ := newQP(t, 8, 4)
		oneDev, one, _ := newQP(t, 8, 4)
		garbage(batch.buf, 8)
		copy(one.buf, batch.buf)
		return batch, one, func(t *testing.T) {
			t.Helper()
			if !bytes.Equal(batch.buf, one.buf) {
				t.Fatalf("rings differ\nPutPlain % x\nPut      % x", batch.buf, one.buf)
			}
			if batch.put != one.put || batch.first != one.first || batch.pending != one.pending || batchDev.doorbells != oneDev.doorbells {
				t.Fatalf("PutPlain left put %d first %d pending %d doorbells %d, Put %d %d %d %d", batch.put, batch.first,
					batch.pending, batchDev.doorbells, one.put, one.first, one.pending, oneDev.doorbells)
			}
		}
	})
}

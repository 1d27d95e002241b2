package rxe

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/plaintest"
)

// TestSQPutPlain compares Put's straight path with put, the general path,
// which it must match byte for byte and in state: the same requests go to
// two QPs whose send rings start with the same garbage (a slot's previous
// contents), through Put on one and put on the other, round the ring
// twice so that the index wraps and the free count reloads.
func TestSQPutPlain(t *testing.T) {
	sges := []provider.SGE{{Addr: 0x1000, Length: 100, LKey: 0x55}, {Addr: 0x2000, Length: 28, LKey: 0x66},
		{Addr: 0x3000, Length: 1 << 30, LKey: 0x77}}
	uc := rcInit
	uc.Type = abi.IB_UVERBS_QPT_UC
	tests := []struct {
		name string
		init provider.QPInit
		wr   provider.SendWR
	}{
		{"send", rcInit, provider.SendWR{ID: 1, Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_SIGNALED, SGE: sges[:1],
			RemoteAddr: 0x9999, RKey: 9, Imm: 0x01020304}},
		{"send no SGE", rcInit, provider.SendWR{ID: 2, Opcode: abi.IB_UVERBS_WR_SEND}},
		{"send with imm", rcInit, provider.SendWR{ID: 3, Opcode: abi.IB_UVERBS_WR_SEND_WITH_IMM, Flags: abi.IB_SEND_SOLICITED,
			SGE: sges[:2], Imm: 0x01020304}},
		{"write", rcInit, provider.SendWR{ID: 4, Opcode: abi.IB_UVERBS_WR_RDMA_WRITE, Flags: abi.IB_SEND_SIGNALED | abi.IB_SEND_FENCE,
			SGE: sges, RemoteAddr: 0x7f0012345678, RKey: 0xaabbccdd, Imm: 5}},
		{"write with imm", uc, provider.SendWR{ID: 5, Opcode: abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, SGE: sges[:2],
			RemoteAddr: 0x8000, RKey: 0x42, Imm: 0xdeadbeef}},
		{"read", rcInit, provider.SendWR{ID: 6, Opcode: abi.IB_UVERBS_WR_RDMA_READ, Flags: abi.IB_SEND_SIGNALED, SGE: sges[1:2],
			RemoteAddr: 0x8008, RKey: 0x43}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, fast, _, fastBuf, _ := newQP(t, tt.init, 8, 4)
			_, gen, _, genBuf, _ := newQP(t, tt.init, 8, 4)
			r := rand.New(rand.NewPCG(1, 2))
			for i := queueHdr; i < len(fastBuf); i++ {
				fastBuf[i] = byte(r.Uint32())
			}
			copy(genBuf, fastBuf)
			for i := range 8 {
				wr := tt.wr
				wr.ID += uint64(i) << 32
				errFast, errGen := fast.Put(&wr), gen.put(&wr)
				if !errors.Is(errFast, errGen) {
					t.Fatalf("request %d: Put = %v, put = %v", i, errFast, errGen)
				}
				if !bytes.Equal(fastBuf, genBuf) {
					t.Fatalf("request %d: rings differ\nPut % x\nput % x", i, fastBuf, genBuf)
				}
				if fast.pending != gen.pending || fast.ssn != gen.ssn || fast.q.free != gen.q.free {
					t.Fatalf("request %d: Put left pending %d ssn %d free %d, put %d %d %d", i,
						fast.pending, fast.ssn, fast.q.free, gen.pending, gen.ssn, gen.q.free)
				}
				if errFast != nil { // the ring is full: the kernel takes it all
					for _, s := range []*sq{fast, gen} {
						if err := s.Flush(); err != nil {
							t.Fatal(err)
						}
					}
					setConsumer(fastBuf, producer(fastBuf))
					setConsumer(genBuf, producer(genBuf))
				}
			}
		})
	}
}

// TestSQPutPlainRefused checks that what the straight path does not take
// goes to put, which refuses it as before and leaves the slot alone.
func TestSQPutPlainRefused(t *testing.T) {
	tests := []struct {
		name string
		wr   provider.SendWR
	}{
		{"too many SGEs", provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, SGE: make([]provider.SGE, 4)}},
		{"too long", provider.SendWR{Opcode: abi.IB_UVERBS_WR_RDMA_WRITE,
			SGE: []provider.SGE{{Length: 1 << 31}, {Length: 1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, s, _, sqBuf, _ := newQP(t, rcInit, 8, 4)
			before := bytes.Clone(sqBuf)
			if err := s.Put(&tt.wr); !errors.Is(err, provider.ErrInvalid) {
				t.Fatalf("Put = %v, want %v", err, provider.ErrInvalid)
			}
			if !bytes.Equal(before, sqBuf) || s.pending != 0 || s.ssn != 0 {
				t.Errorf("refused Put changed the ring or the state (pending %d, ssn %d)", s.pending, s.ssn)
			}
		})
	}
}

// TestSQPutPlainBatch checks PutPlain against Put (plaintest.CheckPutPlain).
func TestSQPutPlainBatch(t *testing.T) {
	cases := append(plaintest.PlainBatches(plaintest.PlainWith(func(w *provider.SendWR) {
		w.Opcode, w.Imm = abi.IB_UVERBS_WR_SEND_WITH_IMM, 0x01020304
	}), int(rcInit.MaxSendSGE)),
		plaintest.PlainBatch{Name: "send with invalidate", Ops: plaintest.PlainOpsRC, WRs: []provider.SendWR{plaintest.PlainSend,
			plaintest.PlainWith(func(w *provider.SendWR) { w.Opcode = abi.IB_UVERBS_WR_SEND_WITH_INV })}, Want: 1},
		plaintest.PlainBatch{Name: "too long", Ops: plaintest.PlainOpsRC, WRs: []provider.SendWR{plaintest.PlainWith(func(w *provider.SendWR) {
			w.SGE = []provider.SGE{{Length: 1 << 31}, {Length: 1}}
		})}, Want: 0},
		// The ring of 8 slots holds 7.
		plaintest.PlainBatch{Name: "full", Ops: plaintest.PlainOpsRC, WRs: slices.Repeat([]provider.SendWR{plaintest.PlainSend}, 8), Want: 7},
	)
	plaintest.CheckPutPlain(t, cases, func(t *testing.T) (plaintest.PlainSQ, plaintest.PlainSQ, func(*testing.T)) {
		_, batch, _, batchBuf, _ := newQP(t, rcInit, 8, 8)
		_, one, _, oneBuf, _ := newQP(t, rcInit, 8, 8)
		r := rand.New(rand.NewPCG(3, 4))
		for i := queueHdr; i < len(batchBuf); i++ {
			batchBuf[i] = byte(r.Uint32())
		}
		copy(oneBuf, batchBuf)
		return batch, one, func(t *testing.T) {
			t.Helper()
			if !bytes.Equal(batchBuf, oneBuf) {
				t.Fatalf("rings differ\nPutPlain % x\nPut      % x", batchBuf, oneBuf)
			}
			if batch.pending != one.pending || batch.published != one.published || batch.ssn != one.ssn || batch.q.free != one.q.free {
				t.Fatalf("PutPlain left pending %d published %d ssn %d free %d, Put %d %d %d %d", batch.pending, batch.published,
					batch.ssn, batch.q.free, one.pending, one.published, one.ssn, one.q.free)
			}
		}
	})
}

package siw

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

// TestSQPutPlain compares PutPlain's loop with putAny, the general path,
// which it must match byte for byte and in state: the same requests go to
// two QPs whose rings start with the same garbage, free flags aside,
// through putPlain on one and putAny on the other, round the ring twice.
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
			for i := range 8 {
				wr := tt.wr
				wr.ID += uint64(i) << 32
				n, errFast := fast.putPlain([]provider.SendWR{wr}, false)
				errGen := gen.putAny(&wr)
				if n != 1 || errFast != nil || errGen != nil {
					t.Fatalf("request %d: putPlain = %d, %v; putAny = %v", i, n, errFast, errGen)
				}
				if !bytes.Equal(fast.buf, gen.buf) {
					t.Fatalf("request %d: rings differ\nputPlain % x\nputAny   % x", i, fast.buf, gen.buf)
				}
				if fast.put != gen.put || fast.first != gen.first || fast.pending != gen.pending {
					t.Fatalf("request %d: putPlain left put %d first %d pending %d, putAny %d %d %d", i,
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

// TestSQPutPlainBatch checks PutPlain against Put, request by request: it
// must put the same requests, leaving the same bytes, state and
// doorbells, stop at the first one it leaves to the caller (a count
// written out per case), and flush unless it stopped there. On a full
// ring it stops without a refusal, and Put then refuses the request.
func TestSQPutPlainBatch(t *testing.T) {
	sge := []provider.SGE{{Addr: 0x1000, Length: 100, LKey: 0x55}}
	send := provider.SendWR{ID: 1, Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_SIGNALED, SGE: sge}
	with := func(f func(*provider.SendWR)) provider.SendWR { wr := send; f(&wr); return wr }
	read := with(func(w *provider.SendWR) { w.Opcode, w.RemoteAddr, w.RKey = abi.IB_UVERBS_WR_RDMA_READ, 0x8000, 7 })
	write := with(func(w *provider.SendWR) {
		w.Opcode, w.RemoteAddr, w.RKey, w.Flags = abi.IB_UVERBS_WR_RDMA_WRITE, 0x9000, 8, 0
	})
	inv := with(func(w *provider.SendWR) {
		w.Opcode, w.Imm, w.Flags = abi.IB_UVERBS_WR_SEND_WITH_INV, 0x1234, abi.IB_SEND_SOLICITED
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
		{"common", all, []provider.SendWR{send, write, read, inv}, 4},
		{"empty", all, nil, 0},
		{"reads not plain", all &^ (1 << abi.IB_UVERBS_WR_RDMA_READ), []provider.SendWR{send, write, read, inv}, 2},
		{"no plain ops", 0, []provider.SendWR{send}, 0},
		{"send with imm", all, []provider.SendWR{send, with(func(w *provider.SendWR) { w.Opcode = abi.IB_UVERBS_WR_SEND_WITH_IMM })}, 1},
		{"inline", all, []provider.SendWR{send, with(func(w *provider.SendWR) { w.Flags |= abi.IB_SEND_INLINE })}, 1},
		{"unknown flag", all, []provider.SendWR{with(func(w *provider.SendWR) { w.Flags |= 1 << 5 })}, 0},
		{"opcode 40", all, []provider.SendWR{send, with(func(w *provider.SendWR) { w.Opcode = 40 })}, 1},
		{"too many SGEs", all, []provider.SendWR{send, send, with(func(w *provider.SendWR) { w.SGE = make([]provider.SGE, 5) })}, 2},
		{"read of two SGEs", all, []provider.SendWR{send, with(func(w *provider.SendWR) { *w = read; w.SGE = make([]provider.SGE, 2) })}, 1},
		{"fenced read", all, []provider.SendWR{with(func(w *provider.SendWR) { *w = read; w.Flags |= abi.IB_SEND_FENCE })}, 0},
		{"full", all, []provider.SendWR{send, write, inv, read, send, write, inv, read, send}, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			batchDev, batch, _ := newQP(t, 8, 4)
			oneDev, one, _ := newQP(t, 8, 4)
			garbage(batch.buf, 8)
			copy(one.buf, batch.buf)
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
			if !bytes.Equal(batch.buf, one.buf) {
				t.Fatalf("rings differ\nPutPlain % x\nPut      % x", batch.buf, one.buf)
			}
			if batch.put != one.put || batch.first != one.first || batch.pending != one.pending || batchDev.doorbells != oneDev.doorbells {
				t.Fatalf("PutPlain left put %d first %d pending %d doorbells %d, Put %d %d %d %d", batch.put, batch.first,
					batch.pending, batchDev.doorbells, one.put, one.first, one.pending, oneDev.doorbells)
			}
			if n < len(tt.wrs) { // the caller puts the request it stopped at
				errBatch, errOne := batch.Put(&tt.wrs[n]), one.Put(&tt.wrs[n])
				if fmt.Sprint(errBatch) != fmt.Sprint(errOne) || !bytes.Equal(batch.buf, one.buf) {
					t.Fatalf("Put after PutPlain = %v, Put alone = %v (rings equal: %t)", errBatch, errOne, bytes.Equal(batch.buf, one.buf))
				}
			}
		})
	}
}

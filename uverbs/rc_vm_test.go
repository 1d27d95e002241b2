package uverbs_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/internal/verbstest"
	"github.com/purerdma/purerdma/uverbs"
)

// grh is in the flags of every receive completion on rxe: RoCE packets
// always carry a GRH, and rxe reports it for all QP types. SrcQP, valid
// for UD only, is 0 on RC.
const grh = cq.GRH

// sendImm is in the flags of rxe's send completions of the *WithImm
// opcodes (make_send_cqe), with Imm left 0.
const sendImm = cq.WithImm

// Buffer layout of the RC tests: A's half and B's half of one region.
const (
	offA = 0
	offB = 1 << 15
)

// TestRCOperations runs every send opcode between two RC QPs on a RoCE
// device and compares each whole work completion (on rxe; on hardware
// what ibv_poll_cq(3) defines of it) and the memory it touched. iWARP QPs
// connect only through rdma_cm, so siw runs this matrix in rdmacm.
func TestRCOperations(t *testing.T) {
	d := testenv.RoCE(t)
	r, a, b := rcPair(t, d)
	buf := r.buf
	base := r.mr.Addr()
	put := func(off int, s string) { copy(buf[off:], s) }
	u64 := func(off int) uint64 { return binary.LittleEndian.Uint64(buf[off:]) }
	setU64 := func(off int, v uint64) { binary.LittleEndian.PutUint64(buf[off:], v) }

	tests := []struct {
		name  string
		setup func()
		recv  []uverbs.RecvWR // posted on B first
		send  []uverbs.SendWR // posted on A
		want  []cq.WC         // in completion order
		check func(t *testing.T)
	}{{
		name:  "write",
		setup: func() { put(offA, "rdma write!") },
		send: []uverbs.SendWR{{ID: 1, Opcode: uverbs.WRRDMAWrite, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{r.sge(offA, 11)}, RemoteAddr: base + offB, RKey: r.mr.RKey()}},
		want:  []cq.WC{{ID: 1, Opcode: cq.OpRDMAWrite, ByteLen: 11, QPNum: a.Num()}},
		check: func(t *testing.T) { verbstest.WantBytes(t, buf[offB:offB+11], "rdma write!") },
	}, {
		name:  "write with imm",
		setup: func() { put(offA, "imm write") },
		recv:  []uverbs.RecvWR{{ID: 20}},
		send: []uverbs.SendWR{{ID: 2, Opcode: uverbs.WRRDMAWriteWithImm, Flags: uverbs.SendSignaled, Imm: 0xdeadbeef,
			SGE: []uverbs.SGE{r.sge(offA, 9)}, RemoteAddr: base + offB + 100, RKey: r.mr.RKey()}},
		want: []cq.WC{
			{ID: 2, Opcode: cq.OpRDMAWrite, ByteLen: 9, QPNum: a.Num(), Flags: sendImm},
			{ID: 20, Opcode: cq.OpRecvRDMAWithImm, ByteLen: 9, Imm: 0xdeadbeef, Flags: cq.WithImm | grh, QPNum: b.Num()},
		},
		check: func(t *testing.T) { verbstest.WantBytes(t, buf[offB+100:offB+109], "imm write") },
	}, {
		name:  "send",
		setup: func() { put(offA, "a send") },
		recv:  []uverbs.RecvWR{{ID: 30, SGE: []uverbs.SGE{r.sge(offB+200, 64)}}},
		send:  []uverbs.SendWR{{ID: 3, Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{r.sge(offA, 6)}}},
		want: []cq.WC{
			{ID: 3, Opcode: cq.OpSend, ByteLen: 6, QPNum: a.Num()},
			{ID: 30, Opcode: cq.OpRecv, ByteLen: 6, QPNum: b.Num(), Flags: grh},
		},
		check: func(t *testing.T) { verbstest.WantBytes(t, buf[offB+200:offB+206], "a send") },
	}, {
		name:  "send with imm",
		setup: func() { put(offA, "imm send") },
		recv:  []uverbs.RecvWR{{ID: 40, SGE: []uverbs.SGE{r.sge(offB+300, 64)}}},
		send: []uverbs.SendWR{{ID: 4, Opcode: uverbs.WRSendWithImm, Flags: uverbs.SendSignaled, Imm: 7,
			SGE: []uverbs.SGE{r.sge(offA, 8)}}},
		want: []cq.WC{
			{ID: 4, Opcode: cq.OpSend, ByteLen: 8, QPNum: a.Num(), Flags: sendImm},
			{ID: 40, Opcode: cq.OpRecv, ByteLen: 8, Imm: 7, Flags: cq.WithImm | grh, QPNum: b.Num()},
		},
		check: func(t *testing.T) { verbstest.WantBytes(t, buf[offB+300:offB+308], "imm send") },
	}, {
		name:  "read",
		setup: func() { put(offB+400, "remote data") },
		send: []uverbs.SendWR{{ID: 5, Opcode: uverbs.WRRDMARead, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{r.sge(offA+400, 11)}, RemoteAddr: base + offB + 400, RKey: r.mr.RKey()}},
		want:  []cq.WC{{ID: 5, Opcode: cq.OpRDMARead, ByteLen: 11, QPNum: a.Num()}},
		check: func(t *testing.T) { verbstest.WantBytes(t, buf[offA+400:offA+411], "remote data") },
	}, {
		name:  "compare and swap",
		setup: func() { setU64(offB+512, 42); setU64(offA+512, 0) },
		send: []uverbs.SendWR{{ID: 6, Opcode: uverbs.WRAtomicCmpAndSwp, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{r.sge(offA+512, 8)}, RemoteAddr: base + offB + 512, RKey: r.mr.RKey(), CompareAdd: 42, Swap: 99}},
		want: []cq.WC{{ID: 6, Opcode: cq.OpCompSwap, ByteLen: 8, QPNum: a.Num()}},
		check: func(t *testing.T) {
			if u64(offA+512) != 42 || u64(offB+512) != 99 {
				t.Errorf("CAS: old %d (want 42), remote %d (want 99)", u64(offA+512), u64(offB+512))
			}
		},
	}, {
		name:  "fetch and add",
		setup: func() { setU64(offB+520, 1000) },
		send: []uverbs.SendWR{{ID: 7, Opcode: uverbs.WRAtomicFetchAndAdd, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{r.sge(offA+520, 8)}, RemoteAddr: base + offB + 520, RKey: r.mr.RKey(), CompareAdd: 5}},
		want: []cq.WC{{ID: 7, Opcode: cq.OpFetchAdd, ByteLen: 8, QPNum: a.Num()}},
		check: func(t *testing.T) {
			if u64(offA+520) != 1000 || u64(offB+520) != 1005 {
				t.Errorf("FAA: old %d (want 1000), remote %d (want 1005)", u64(offA+520), u64(offB+520))
			}
		},
	}, {
		name:  "inline send",
		setup: func() { put(offA+600, "inline!"); put(offA+700, "+more") },
		recv:  []uverbs.RecvWR{{ID: 80, SGE: []uverbs.SGE{r.sge(offB+600, 64)}}},
		// LKey 0: inline data needs no registration.
		send: []uverbs.SendWR{{ID: 8, Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled | uverbs.SendInline,
			SGE: []uverbs.SGE{{Addr: base + offA + 600, Length: 7}, {Addr: base + offA + 700, Length: 5}}}},
		want: []cq.WC{
			{ID: 8, Opcode: cq.OpSend, ByteLen: 12, QPNum: a.Num()},
			{ID: 80, Opcode: cq.OpRecv, ByteLen: 12, QPNum: b.Num(), Flags: grh},
		},
		check: func(t *testing.T) { verbstest.WantBytes(t, buf[offB+600:offB+612], "inline!+more") },
	}, {
		name:  "several SGEs both sides",
		setup: func() { put(offA+800, "gat"); put(offA+900, "her") },
		recv:  []uverbs.RecvWR{{ID: 90, SGE: []uverbs.SGE{r.sge(offB+800, 2), r.sge(offB+900, 64)}}},
		send: []uverbs.SendWR{{ID: 9, Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{r.sge(offA+800, 3), r.sge(offA+900, 3)}}},
		want: []cq.WC{
			{ID: 9, Opcode: cq.OpSend, ByteLen: 6, QPNum: a.Num()},
			{ID: 90, Opcode: cq.OpRecv, ByteLen: 6, QPNum: b.Num(), Flags: grh},
		},
		check: func(t *testing.T) {
			verbstest.WantBytes(t, buf[offB+800:offB+802], "ga")
			verbstest.WantBytes(t, buf[offB+900:offB+904], "ther")
		},
	}, {
		name:  "batch with unsignaled and fenced requests",
		setup: func() { put(offA+1000, "one"); put(offB+1100, "two") },
		recv:  []uverbs.RecvWR{{ID: 100, SGE: []uverbs.SGE{r.sge(offB+1200, 64)}}},
		send: []uverbs.SendWR{
			{ID: 10, Opcode: uverbs.WRRDMAWrite, SGE: []uverbs.SGE{r.sge(offA+1000, 3)}, RemoteAddr: base + offB + 1000, RKey: r.mr.RKey()},
			{ID: 11, Opcode: uverbs.WRRDMARead, SGE: []uverbs.SGE{r.sge(offA+1100, 3)}, RemoteAddr: base + offB + 1100, RKey: r.mr.RKey()},
			// The fence holds the send until the read has its data, so
			// the send carries what the read fetched.
			{ID: 12, Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled | uverbs.SendFence, SGE: []uverbs.SGE{r.sge(offA+1100, 3)}},
		},
		want: []cq.WC{
			{ID: 12, Opcode: cq.OpSend, ByteLen: 3, QPNum: a.Num()},
			{ID: 100, Opcode: cq.OpRecv, ByteLen: 3, QPNum: b.Num(), Flags: grh},
		},
		check: func(t *testing.T) {
			verbstest.WantBytes(t, buf[offB+1000:offB+1003], "one")
			verbstest.WantBytes(t, buf[offB+1200:offB+1203], "two")
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup()
			if n, err := b.PostRecv(tt.recv); err != nil || n != len(tt.recv) {
				t.Fatalf("PostRecv: %d, %v", n, err)
			}
			if n, err := a.PostSend(tt.send); err != nil || n != len(tt.send) {
				t.Fatalf("PostSend: %d, %v", n, err)
			}
			// Send and receive completions share the CQ; their relative
			// order is the device's business.
			want, got := verbstest.SortWC(tt.want), verbstest.SortWC(r.poll(t, len(tt.want)))
			if d.Hardware() {
				want, got = verbstest.Defined(want, false), verbstest.Defined(got, false)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("completions (-want +got):\n%s", diff)
			}
			tt.check(t)
		})
	}
}

// TestRCErrors checks the error cases of the verbs: bad arguments, a full
// queue, the wrong destroy order and use after close, each with its
// sentinel and errno, and an error completion with only the fields
// ibv_poll_cq(3) calls valid.
func TestRCErrors(t *testing.T) {
	d := testenv.RoCE(t)
	r, a, b := rcPair(t, d)

	t.Run("too many SGEs", func(t *testing.T) {
		sges := make([]uverbs.SGE, a.Cap().MaxSendSGE+1)
		_, err := a.PostSend([]uverbs.SendWR{{Opcode: uverbs.WRSend, SGE: sges}})
		wantErr(t, err, uverbs.ErrInvalid, "EINVAL")
	})
	t.Run("atomic with a short SGE", func(t *testing.T) {
		_, err := a.PostSend([]uverbs.SendWR{{Opcode: uverbs.WRAtomicFetchAndAdd, SGE: []uverbs.SGE{r.sge(0, 4)}}})
		wantErr(t, err, uverbs.ErrInvalid, "EINVAL")
	})
	t.Run("inline too long", func(t *testing.T) {
		_, err := a.PostSend([]uverbs.SendWR{{Opcode: uverbs.WRSend, Flags: uverbs.SendInline, SGE: []uverbs.SGE{r.sge(0, a.Cap().MaxInlineData+1)}}})
		wantErr(t, err, uverbs.ErrInvalid, "EINVAL")
	})
	t.Run("receive queue full", func(t *testing.T) {
		wrs := make([]uverbs.RecvWR, b.Cap().MaxRecvWR+1)
		n, err := b.PostRecv(wrs)
		wantErr(t, err, uverbs.ErrQueueFull, "ENOMEM")
		if n != b.Cap().MaxRecvWR {
			t.Errorf("posted %d before the queue filled, want %d", n, b.Cap().MaxRecvWR)
		}
	})
	t.Run("destroy order", func(t *testing.T) {
		wantErr(t, r.cq.Close(), uverbs.ErrBusy, "EBUSY")
		wantErr(t, r.pd.Close(), uverbs.ErrBusy, "EBUSY")
		wantErr(t, r.ch.Close(), uverbs.ErrBusy, "EBUSY")
	})
	t.Run("remote access error", func(t *testing.T) {
		posted := b.Cap().MaxRecvWR // by "receive queue full"
		_, err := a.PostSend([]uverbs.SendWR{{ID: 77, Opcode: uverbs.WRRDMAWrite, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{r.sge(0, 8)}, RemoteAddr: r.mr.Addr(), RKey: r.mr.RKey() ^ 0xff00}})
		if err != nil {
			t.Fatal(err)
		}
		// The requester completes with the error; the responder's QP
		// goes to ERR too and flushes every posted receive.
		got := verbstest.SortWC(r.poll(t, 1+posted))
		want := []cq.WC{{ID: 77, Status: cq.RemAccessErr, QPNum: a.Num()}}
		for range posted {
			// The receives were posted with ID 0, sorted first.
			want = append([]cq.WC{{Status: cq.WRFlushErr, QPNum: b.Num()}}, want...)
		}
		// Only ID, Status, QPNum and VendorErr are valid on error, and
		// Poll zeroes the rest. rxe's VendorErr is 0; a hardware
		// device's is its own syndrome.
		if d.Hardware() {
			for i := range got {
				got[i].VendorErr = 0
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("error completions (-want +got):\n%s", diff)
		}
		if err := got[len(got)-1].Err(); !errors.Is(err, cq.ErrCompletion) {
			t.Errorf("WC.Err() = %v, want ErrCompletion", err)
		}
		for _, qp := range []*uverbs.QP{a, b} {
			attr, err := qp.Query(uverbs.QPAttrState)
			if err != nil || attr.State != uverbs.QPSErr {
				t.Errorf("QP %d state after the error = %v, %v; want ERR", qp.Num(), attr.State, err)
			}
		}
	})
	t.Run("use after close", func(t *testing.T) {
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		_, err := a.PostSend([]uverbs.SendWR{{Opcode: uverbs.WRSend}})
		wantErr(t, err, uverbs.ErrClosed, "EBADF")
		_, err = a.PostRecv([]uverbs.RecvWR{{}})
		wantErr(t, err, uverbs.ErrClosed, "EBADF")
		_, err = a.Query(uverbs.QPAttrState)
		wantErr(t, err, uverbs.ErrClosed, "EBADF")
	})
}

func wantErr(t *testing.T, err, sentinel error, errno string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Errorf("error %v, want %v", err, sentinel)
		return
	}
	if !errors.Is(err, errnoByName[errno]) {
		t.Errorf("error %v does not carry %s", err, errno)
	}
}

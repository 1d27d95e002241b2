package mlx5

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// The SGE most tests send from.
var sge1 = provider.SGE{Addr: 0x1122334455667788, Length: 0x40, LKey: 0xaabbcc}

// garbage fills b with 0xee, so that the bytes a WQE leaves alone show.
func garbage(b []byte) {
	for i := range b {
		b[i] = 0xee
	}
}

// TestWQE: the bytes of one WQE per opcode, on an RC QP (QP number 0x123)
// whose queue was full of 0xee: what libmlx5's _mlx5_post_send writes, and
// only that. The doorbell record's send word is the blocks used, and
// bfreg 0 (no BlueFlame) gets the WQE's first 8 bytes.
func TestWQE(t *testing.T) {
	for _, tc := range []struct {
		name   string
		typ    uint8
		sigAll bool
		wr     provider.SendWR
		want   string // the first 64 bytes of the queue
		blocks uint32
	}{
		{
			name: "SEND signaled",
			wr:   provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_SIGNALED, SGE: []provider.SGE{sge1}},
			want: "00 00 00 0a 00 01 23 02 00 00 00 08 00 00 00 00" +
				" 00 00 00 40 00 aa bb cc 11 22 33 44 55 66 77 88" +
				" ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee" +
				" ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee",
			blocks: 1,
		},
		{
			name: "SEND_WITH_IMM solicited",
			wr:   provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND_WITH_IMM, Flags: abi.IB_SEND_SOLICITED, Imm: 0xdeadbeef, SGE: []provider.SGE{sge1}},
			want: "00 00 00 0b 00 01 23 02 00 00 00 02 de ad be ef" +
				" 00 00 00 40 00 aa bb cc 11 22 33 44 55 66 77 88" +
				" ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee" +
				" ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee",
			blocks: 1,
		},
		{
			name: "SEND_WITH_INV fenced",
			wr:   provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND_WITH_INV, Flags: abi.IB_SEND_FENCE, Imm: 0x12345678, SGE: []provider.SGE{sge1}},
			want: "00 00 00 01 00 01 23 02 00 00 00 80 12 34 56 78" +
				" 00 00 00 40 00 aa bb cc 11 22 33 44 55 66 77 88" +
				" ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee" +
				" ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee",
			blocks: 1,
		},
		{
			name:   "RDMA_WRITE, every send signaled",
			sigAll: true,
			wr:     provider.SendWR{Opcode: abi.IB_UVERBS_WR_RDMA_WRITE, RemoteAddr: 0x0102030405060708, RKey: 0x99, SGE: []provider.SGE{sge1}},
			want: "00 00 00 08 00 01 23 03 00 00 00 08 00 00 00 00" +
				" 01 02 03 04 05 06 07 08 00 00 00 99 00 00 00 00" +
				" 00 00 00 40 00 aa bb cc 11 22 33 44 55 66 77 88" +
				" ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee",
			blocks: 1,
		},
		{
			name: "RDMA_WRITE_WITH_IMM of two SGEs, one empty",
			wr: provider.SendWR{Opcode: abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, Flags: abi.IB_SEND_SIGNALED | abi.IB_SEND_SOLICITED,
				Imm: 7, RemoteAddr: 0x10, RKey: 0x20, SGE: []provider.SGE{{Addr: 1, LKey: 2}, sge1}},
			want: "00 00 00 09 00 01 23 03 00 00 00 0a 00 00 00 07" +
				" 00 00 00 00 00 00 00 10 00 00 00 20 00 00 00 00" +
				" 00 00 00 40 00 aa bb cc 11 22 33 44 55 66 77 88" +
				" ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee",
			blocks: 1,
		},
		{
			name: "RDMA_READ",
			wr:   provider.SendWR{Opcode: abi.IB_UVERBS_WR_RDMA_READ, Flags: abi.IB_SEND_SIGNALED, RemoteAddr: 0xfedcba9876543210, RKey: 0xcafe, SGE: []provider.SGE{sge1}},
			want: "00 00 00 10 00 01 23 03 00 00 00 08 00 00 00 00" +
				" fe dc ba 98 76 54 32 10 00 00 ca fe 00 00 00 00" +
				" 00 00 00 40 00 aa bb cc 11 22 33 44 55 66 77 88" +
				" ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee",
			blocks: 1,
		},
		{
			name: "ATOMIC_CMP_AND_SWP",
			wr: provider.SendWR{Opcode: abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, Flags: abi.IB_SEND_SIGNALED, RemoteAddr: 0x1000, RKey: 0x33,
				CompareAdd: 0x0a0b0c0d0e0f1011, Swap: 0x2122232425262728, SGE: []provider.SGE{{Addr: 0x5000, Length: 8, LKey: 0x44}}},
			want: "00 00 00 11 00 01 23 04 00 00 00 08 00 00 00 00" +
				" 00 00 00 00 00 00 10 00 00 00 00 33 00 00 00 00" +
				" 21 22 23 24 25 26 27 28 0a 0b 0c 0d 0e 0f 10 11" +
				" 00 00 00 08 00 00 00 44 00 00 00 00 00 00 50 00",
			blocks: 1,
		},
		{
			// The compare field is left as it was.
			name: "ATOMIC_FETCH_AND_ADD",
			wr: provider.SendWR{Opcode: abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD, Flags: abi.IB_SEND_SIGNALED, RemoteAddr: 0x1008, RKey: 0x33,
				CompareAdd: 5, Swap: 0x99, SGE: []provider.SGE{{Addr: 0x5000, Length: 8, LKey: 0x44}}},
			want: "00 00 00 12 00 01 23 04 00 00 00 08 00 00 00 00" +
				" 00 00 00 00 00 00 10 08 00 00 00 33 00 00 00 00" +
				" 00 00 00 00 00 00 00 05 ee ee ee ee ee ee ee ee" +
				" 00 00 00 08 00 00 00 44 00 00 00 00 00 00 50 00",
			blocks: 1,
		},
		{
			// Five segments: the WQE takes two blocks.
			name: "SEND of four SGEs",
			wr: provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, SGE: []provider.SGE{
				{Addr: 1, Length: 1, LKey: 1}, {Addr: 2, Length: 2, LKey: 2}, {Addr: 3, Length: 3, LKey: 3}, {Addr: 4, Length: 4, LKey: 4}}},
			want: "00 00 00 0a 00 01 23 05 00 00 00 00 00 00 00 00" +
				" 00 00 00 01 00 00 00 01 00 00 00 00 00 00 00 01" +
				" 00 00 00 02 00 00 00 02 00 00 00 00 00 00 00 02" +
				" 00 00 00 03 00 00 00 03 00 00 00 00 00 00 00 03",
			blocks: 2,
		},
		{
			// No data: a control segment alone.
			name:   "SEND of nothing",
			wr:     provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_SIGNALED},
			want:   "00 00 00 0a 00 01 23 01 00 00 00 08 00 00 00 00" + " ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee" + " ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee" + " ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee",
			blocks: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := openCtx(t, newFakeDev(t), ucontextResp(true))
			q := newQP(t, c, qpOpts{sendWR: 4, sendSGE: 4, qpn: 0x123, sigAll: tc.sigAll})
			garbage(q.buf[q.sq.off:])
			if err := q.sq.Put(&tc.wr); err != nil {
				t.Fatal(err)
			}
			if err := q.sq.Flush(); err != nil {
				t.Fatal(err)
			}
			if got, want := q.buf[q.sq.off:q.sq.off+64], hexBytes(tc.want); !bytes.Equal(got, want) {
				t.Errorf("WQE\n% x\nwant\n% x", got, want)
			}
			if got := binary.BigEndian.Uint32(q.db.b[4:]); got != tc.blocks {
				t.Errorf("doorbell record send word %d, want %d", got, tc.blocks)
			}
			if got, want := c.uars[0][0x800:0x808], q.buf[q.sq.off:q.sq.off+8]; !bytes.Equal(got, want) {
				t.Errorf("UAR doorbell % x, want % x", got, want)
			}
		})
	}
}

// TestWQEUD: a UD send is the control segment, the AH's address vector
// with the remote QP (and the extended-AV flag) and Q_Key, and the data.
func TestWQEUD(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	q := newQP(t, c, qpOpts{typ: abi.IB_UVERBS_QPT_UD, sendWR: 2, sendSGE: 1, qpn: 0xabcdef})
	garbage(q.buf[q.sq.off:])
	var ah provider.AH
	for i := range ah.AV {
		ah.AV[i] = byte(0x80 + i)
	}
	wr := provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND_WITH_IMM, Flags: abi.IB_SEND_SIGNALED, Imm: 0x01020304,
		SGE: []provider.SGE{sge1}, AH: &ah, RemoteQPN: 0x456, RemoteQKey: 0x11111111}
	if err := q.sq.Put(&wr); err != nil {
		t.Fatal(err)
	}
	q.sq.Flush()
	want := hexBytes("00 00 00 0b ab cd ef 05 00 00 00 08 01 02 03 04" +
		" 11 11 11 11 84 85 86 87 80 00 04 56 8c 8d 8e 8f" +
		" 90 91 92 93 94 95 96 97 98 99 9a 9b 9c 9d 9e 9f" +
		" a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 aa ab ac ad ae af" +
		" 00 00 00 40 00 aa bb cc 11 22 33 44 55 66 77 88" +
		" ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee")
	if got := q.buf[q.sq.off : q.sq.off+96]; !bytes.Equal(got, want) {
		t.Errorf("WQE\n% x\nwant\n% x", got, want)
	}
	if got := binary.BigEndian.Uint32(q.db.b[4:]); got != 2 {
		t.Errorf("blocks %d, want 2", got)
	}
	if err := q.sq.Put(&provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND}); err == nil {
		t.Error("UD send without an AH accepted")
	}
}

// TestWQEInline: inline data follows its byte count (with the inline
// flag), padded to 16 bytes; a request with more than the QP's inline
// size is refused after the SGEs that fit were copied, as libmlx5 leaves
// it.
func TestWQEInline(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	q := newQP(t, c, qpOpts{sendWR: 4, sendSGE: 1, inline: 40, qpn: 0x123})
	if q.maxInline != 60 {
		t.Fatalf("max inline %d, want 60", q.maxInline)
	}
	garbage(q.buf[q.sq.off:])
	data := userBuf(t, 64)
	for i := range data {
		data[i] = byte(i + 1)
	}
	a := mem.Addr(data)
	wr := provider.SendWR{Opcode: abi.IB_UVERBS_WR_RDMA_WRITE, Flags: abi.IB_SEND_INLINE | abi.IB_SEND_SIGNALED, RemoteAddr: 0x77, RKey: 0x88,
		SGE: []provider.SGE{{Addr: a, Length: 5, LKey: 0xdead}, {Addr: a + 16, Length: 3, LKey: 0xbeef}}}
	q.sq.maxGS = 2
	if err := q.sq.Put(&wr); err != nil {
		t.Fatal(err)
	}
	q.sq.Flush()
	want := hexBytes("00 00 00 08 00 01 23 03 00 00 00 08 00 00 00 00" +
		" 00 00 00 00 00 00 00 77 00 00 00 88 00 00 00 00" +
		" 80 00 00 08 01 02 03 04 05 11 12 13 ee ee ee ee" +
		" ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee")
	if got := q.buf[q.sq.off : q.sq.off+64]; !bytes.Equal(got, want) {
		t.Errorf("WQE\n% x\nwant\n% x", got, want)
	}

	// 61 bytes: the first SGE (50) is copied, the second refused.
	wr = provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_INLINE,
		SGE: []provider.SGE{{Addr: a, Length: 50}, {Addr: a, Length: 11}}}
	if err := q.sq.Put(&wr); !errors.Is(err, provider.ErrInvalid) {
		t.Fatalf("too much inline data: %v", err)
	}
	got := q.buf[q.sq.off+64 : q.sq.off+128]
	if want := append(hexBytes("00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 ee ee ee ee"), data[:44]...); !bytes.Equal(got[:8], hexBytes("ee ee ee ee ee ee ee ee")) || !bytes.Equal(got[8:], want[8:]) {
		t.Errorf("refused WQE\n% x\nwant\n% x", got, want)
	}
	if q.sq.pending != 0 || q.sq.lastCtrl != q.sq.off+64 || q.sq.lastSize != 1 {
		t.Errorf("after the refusal: pending %d, last control %d size %d", q.sq.pending, q.sq.lastCtrl, q.sq.lastSize)
	}
}

// TestWQEWrap: a WQE that runs past the end of the queue continues at its
// start, with inline data, data segments and the datagram segment; the
// BlueFlame copy of such a WQE wraps too.
func TestWQEWrap(t *testing.T) {
	t.Run("inline", func(t *testing.T) {
		c := openCtx(t, newFakeDev(t), ucontextResp(true))
		q := newQP(t, c, qpOpts{sendWR: 1, sendSGE: 1, inline: 100, qpn: 0x123, bfreg: 1})
		if q.sq.wqeCnt != 8 || q.maxInline != 124 {
			t.Fatalf("%d blocks, inline %d; want 8, 124", q.sq.wqeCnt, q.maxInline)
		}
		q.sq.curPost, q.sq.lastCtrl = 7, -1
		data := userBuf(t, 100)
		for i := range data {
			data[i] = byte(i)
		}
		wr := provider.SendWR{ID: 9, Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_INLINE, SGE: []provider.SGE{{Addr: mem.Addr(data), Length: 100}}}
		if err := q.sq.Put(&wr); err != nil {
			t.Fatal(err)
		}
		q.sq.Flush()
		sq := q.buf[q.sq.off:q.sq.end()]
		wantHead := append(hexBytes("00 00 07 0a 00 01 23 08 00 00 00 00 00 00 00 00 80 00 00 64"), data[:44]...)
		if !bytes.Equal(sq[448:], wantHead) || !bytes.Equal(sq[:56], data[44:]) {
			t.Errorf("wrapped WQE: end\n% x\nstart\n% x", sq[448:], sq[:56])
		}
		if q.sq.curPost != 9 || binary.BigEndian.Uint32(q.db.b[4:]) != 9 {
			t.Errorf("blocks %d", q.sq.curPost)
		}
		// Eight segments on bfreg 1: a BlueFlame copy of two blocks,
		// the last and the first of the queue.
		bf := c.uars[0][0xa00:0xb00]
		if !bytes.Equal(bf[:64], sq[448:]) || !bytes.Equal(bf[64:128], sq[:64]) || !bytes.Equal(bf[128:], make([]byte, 128)) {
			t.Errorf("BlueFlame buffer\n% x", bf)
		}
	})
	t.Run("data segments", func(t *testing.T) {
		c := openCtx(t, newFakeDev(t), ucontextResp(true))
		q := newQP(t, c, qpOpts{sendWR: 4, sendSGE: 4, qpn: 0x123})
		q.sq.curPost = 15
		wr := provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, SGE: []provider.SGE{
			{Addr: 1, Length: 1, LKey: 1}, {Addr: 2, Length: 2, LKey: 2}, {Addr: 3, Length: 3, LKey: 3}, {Addr: 4, Length: 4, LKey: 4}}}
		if err := q.sq.Put(&wr); err != nil {
			t.Fatal(err)
		}
		sq := q.buf[q.sq.off:q.sq.end()]
		want := hexBytes("00 00 0f 0a 00 01 23 05 00 00 00 00 00 00 00 00" +
			" 00 00 00 01 00 00 00 01 00 00 00 00 00 00 00 01" +
			" 00 00 00 02 00 00 00 02 00 00 00 00 00 00 00 02" +
			" 00 00 00 03 00 00 00 03 00 00 00 00 00 00 00 03")
		if !bytes.Equal(sq[960:], want) || !bytes.Equal(sq[:16], hexBytes("00 00 00 04 00 00 00 04 00 00 00 00 00 00 00 04")) {
			t.Errorf("wrapped WQE: end\n% x\nstart\n% x", sq[960:], sq[:16])
		}
		if q.sq.curPost != 17 {
			t.Errorf("blocks %d, want 17", q.sq.curPost)
		}
	})
	t.Run("UD", func(t *testing.T) {
		c := openCtx(t, newFakeDev(t), ucontextResp(true))
		q := newQP(t, c, qpOpts{typ: abi.IB_UVERBS_QPT_UD, sendWR: 2, sendSGE: 1, qpn: 1})
		if q.sq.wqeCnt != 4 {
			t.Fatalf("%d blocks, want 4", q.sq.wqeCnt)
		}
		q.sq.curPost = 3
		wr := provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, SGE: []provider.SGE{sge1}, AH: &provider.AH{}, RemoteQPN: 2, RemoteQKey: 3}
		if err := q.sq.Put(&wr); err != nil {
			t.Fatal(err)
		}
		sq := q.buf[q.sq.off:q.sq.end()]
		if !bytes.Equal(sq[:16], hexBytes("00 00 00 40 00 aa bb cc 11 22 33 44 55 66 77 88")) {
			t.Errorf("data segment after the wrap: % x", sq[:16])
		}
		if !bytes.Equal(sq[192:208], hexBytes("00 00 03 0a 00 00 01 05 00 00 00 00 00 00 00 00")) {
			t.Errorf("control segment % x", sq[192:208])
		}
	})
}

// TestBlueFlame: a batch of one request of more than one segment goes to
// the bfreg whole, in alternating halves; a batch of two, or a request
// of one segment, rings with its first 8 bytes.
func TestBlueFlame(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	q := newQP(t, c, qpOpts{sendWR: 8, sendSGE: 1, qpn: 0x123, bfreg: 5})
	bf := c.uars[1][0xa00:0xc00] // bfreg 5: the second of UAR 1
	wqe := func(n uint32) []byte { off := q.sq.off + int(n)*64; return q.buf[off : off+64] }
	send := provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, SGE: []provider.SGE{sge1}}

	q.sq.Put(&send)
	q.sq.Flush()
	if !bytes.Equal(bf[:64], wqe(0)) {
		t.Errorf("first ring: half 0\n% x", bf[:64])
	}
	q.sq.Put(&send)
	q.sq.Flush()
	if !bytes.Equal(bf[256:320], wqe(1)) {
		t.Errorf("second ring: half 1\n% x", bf[256:320])
	}
	// Two requests: the second's first 8 bytes, in half 0.
	q.sq.Put(&send)
	q.sq.Put(&send)
	q.sq.Flush()
	if !bytes.Equal(bf[:8], wqe(3)[:8]) || !bytes.Equal(bf[8:64], wqe(0)[8:]) {
		t.Errorf("batch of two: half 0\n% x", bf[:64])
	}
	// One segment: a doorbell, in half 1.
	q.sq.Put(&provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND})
	q.sq.Flush()
	if !bytes.Equal(bf[256:264], wqe(4)[:8]) || !bytes.Equal(bf[264:320], wqe(1)[8:]) {
		t.Errorf("control segment alone: half 1\n% x", bf[256:320])
	}
	if got := binary.BigEndian.Uint32(q.db.b[4:]); got != 5 {
		t.Errorf("doorbell record %d, want 5", got)
	}
	if !c.bfs[5].needLock || c.bfs[5].offset != 0 {
		t.Errorf("bfreg 5: lock %v, offset %d", c.bfs[5].needLock, c.bfs[5].offset)
	}
}

// TestSendQueueFull: max_post requests fit; a completion makes room.
func TestSendQueueFull(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	q := newQP(t, c, qpOpts{sendWR: 4, sendSGE: 1, qpn: 1})
	if q.sq.maxPost != 4 {
		t.Fatalf("max post %d", q.sq.maxPost)
	}
	send := provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, SGE: []provider.SGE{sge1}}
	for i := 0; i < 4; i++ {
		if err := q.sq.Put(&send); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.sq.Put(&send); !errors.Is(err, provider.ErrFull) {
		t.Fatalf("fifth request: %v", err)
	}
	q.sq.Flush()
	if q.sq.Idle() {
		t.Error("Idle with four requests out")
	}
	q.sq.tail.Store(1)
	if err := q.sq.Put(&send); err != nil {
		t.Errorf("after a completion: %v", err)
	}
	for _, tc := range []struct {
		wr   provider.SendWR
		want error
	}{
		{provider.SendWR{Opcode: abi.IB_UVERBS_WR_FLUSH}, provider.ErrInvalid},
		{provider.SendWR{Opcode: abi.IB_UVERBS_WR_BIND_MW}, provider.ErrUnsupported},
		{provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, SGE: []provider.SGE{sge1, sge1}}, provider.ErrInvalid},
	} {
		q.sq.tail.Store(q.sq.head.Load())
		if err := q.sq.Put(&tc.wr); !errors.Is(err, tc.want) {
			t.Errorf("opcode %d: %v, want %v", tc.wr.Opcode, err, tc.want)
		}
	}
}

// TestQPSizes: the queues and the capacities reported, as libmlx5's
// mlx5_calc_sq_size and mlx5_calc_rq_size make them, and CREATE_QP's
// driver data.
func TestQPSizes(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		o                          qpOpts
		sqCnt, sqPost, inline      uint32
		rqCnt, rqShift, rqPost, gs uint32
	}{
		{"RC 16x1", qpOpts{sendWR: 16, sendSGE: 1, recvWR: 10, recvSGE: 1}, 64, 16, 60, 16, 4, 16, 1},
		{"RC inline 100", qpOpts{sendWR: 10, sendSGE: 2, inline: 100, recvWR: 1, recvSGE: 1}, 64, 12, 124, 4, 4, 4, 1},
		{"UD", qpOpts{typ: abi.IB_UVERBS_QPT_UD, sendWR: 8, sendSGE: 1, recvWR: 4, recvSGE: 3}, 16, 8, 60, 4, 6, 4, 4},
		{"no send queue", qpOpts{recvWR: 2, recvSGE: 2}, 0, 0, 0, 2, 5, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := openCtx(t, newFakeDev(t), ucontextResp(true))
			o := tc.o
			o.qpn = 0x77
			o.wantReq = func(t *testing.T, req []byte, init *provider.QPInit) {
				var r abi.MLX5CreateQP
				decode(req, &r)
				q := c.uidx.find(0)
				if r.BufAddr != mem.Addr(q.buf) || r.DBAddr != q.db.addr() || r.SQWQECount != tc.sqCnt || r.RQWQECount != tc.rqCnt ||
					r.RQWQEShift != tc.rqShift || r.Flags != abi.MLX5_QP_FLAG_SCATTER_CQE || r.UIdx != 0 || r.BfregIndex != 0 || r.ECEOptions != 0 {
					t.Errorf("request %+v", r)
				}
				if init.MaxInline != tc.inline {
					t.Errorf("inline asked for %d, want %d", init.MaxInline, tc.inline)
				}
				if q.sq.off != int(tc.rqCnt)<<tc.rqShift {
					t.Errorf("send queue at %d", q.sq.off)
				}
			}
			o.wantInit = func(t *testing.T, req []byte, init *provider.QPInit) {
				if init.MaxSendWR != tc.sqPost || init.MaxRecvWR != tc.rqPost || init.MaxRecvSGE != tc.gs {
					t.Errorf("capacities %d %d %d", init.MaxSendWR, init.MaxRecvWR, init.MaxRecvSGE)
				}
			}
			newQP(t, c, o)
		})
	}
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	cq := newCQ(t, c, 4, 1)
	for _, init := range []provider.QPInit{
		{Type: abi.IB_UVERBS_QPT_RC, MaxSendWR: 1, MaxSendSGE: 53},
		{Type: abi.IB_UVERBS_QPT_RC, MaxSendWR: 1, MaxInline: 1000},
		{Type: abi.IB_UVERBS_QPT_RC, MaxRecvWR: 1 << 16, MaxRecvSGE: 1},
		{Type: abi.IB_UVERBS_QPT_RC, MaxRecvWR: 1, MaxRecvSGE: 33},
	} {
		init.SendCQ, init.RecvCQ = cq, cq
		if _, err := c.CreateQP(&init, make([]byte, createQPSize)); !errors.Is(err, provider.ErrInvalid) {
			t.Errorf("%+v: %v", init, err)
		}
	}
}

// TestQPDynamicUAR: with dynamic UARs a QP takes a dedicated bfreg of a
// page allocated for it (two bfregs a page), named by page in CREATE_QP;
// the fifth QP gets a shared one, and a destroyed QP's dedicated bfreg
// goes to the next.
func TestQPDynamicUAR(t *testing.T) {
	dev := &fakeUARDev{fakeDev: newFakeDev(t)}
	r := ucontextResp(false)
	r.CompMask |= abi.MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_ECE
	c := openCtx(t, dev, r)
	cq := newCQ(t, c, 4, 1)
	var qps []*qp
	for i := 0; i < 5; i++ {
		wantPage := []uint32{101, 101, 102, 102, 103}[i]
		qps = append(qps, newQP(t, c, qpOpts{sendWR: 1, sendSGE: 1, sendCQ: cq, qpn: uint32(i), noCleanup: i == 0,
			wantReq: func(t *testing.T, req []byte, _ *provider.QPInit) {
				var r abi.MLX5CreateQP
				decode(req, &r)
				if r.Flags != abi.MLX5_QP_FLAG_SCATTER_CQE|abi.MLX5_QP_FLAG_UAR_PAGE_INDEX || r.BfregIndex != wantPage || r.ECEOptions != 0x10000000 || r.UIdx != uint32(i) {
					t.Errorf("QP %d: request %+v", i, r)
				}
			}}))
	}
	for i, want := range []int{0x800, 0xa00, 0x800, 0xa00, 0x800} {
		bf := qps[i].bf
		if bf.reg != want || bf.bufSize != 256 || bf.needLock != (i == 4) {
			t.Errorf("QP %d: reg %#x size %d lock %v", i, bf.reg, bf.bufSize, bf.needLock)
		}
	}
	if got := dev.types; len(got) != 4 || got[1] != 0 || got[3] != 0 {
		t.Errorf("UAR types %v", got)
	}
	qps[0].sq.Close()
	qps[0].rq.Close()
	q := newQP(t, c, qpOpts{sendWR: 1, sendSGE: 1, sendCQ: cq, qpn: 9})
	if q.bf != qps[0].bf || q.uidx != 0 {
		t.Errorf("a destroyed QP's bfreg (or user index %d) is not reused", q.uidx)
	}
}

// TestRecvQueue: a receive WQE has a data segment per SGE of non-zero
// length and, when there is room, an entry with the invalid lkey; Flush
// puts the WQE count in the doorbell record's first word.
func TestRecvQueue(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	q := newQP(t, c, qpOpts{sendWR: 1, sendSGE: 1, recvWR: 4, recvSGE: 2, qpn: 1})
	garbage(q.buf[:q.sq.off])
	wrs := []provider.RecvWR{
		{ID: 1, SGE: []provider.SGE{{Addr: 0x1000, Length: 0x10, LKey: 5}, {Addr: 0x2000, LKey: 6}}},
		{ID: 2, SGE: []provider.SGE{{Addr: 0x3000, Length: 0x20, LKey: 7}, {Addr: 0x4000, Length: 0x30, LKey: 8}}},
	}
	for i := range wrs {
		if err := q.rq.Put(&wrs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if binary.BigEndian.Uint32(q.db.b) != 0 {
		t.Error("doorbell record written before Flush")
	}
	q.rq.Flush()
	want := hexBytes("00 00 00 10 00 00 00 05 00 00 00 00 00 00 10 00" +
		" 00 00 00 00 00 00 01 00 00 00 00 00 00 00 00 00" +
		" 00 00 00 20 00 00 00 07 00 00 00 00 00 00 30 00" +
		" 00 00 00 30 00 00 00 08 00 00 00 00 00 00 40 00" +
		" ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee ee")
	if got := q.buf[:80]; !bytes.Equal(got, want) {
		t.Errorf("receive queue\n% x\nwant\n% x", got, want)
	}
	if got := binary.BigEndian.Uint32(q.db.b); got != 2 {
		t.Errorf("doorbell record %d, want 2", got)
	}
	for i := 0; i < 2; i++ {
		q.rq.Put(&wrs[0])
	}
	if err := q.rq.Put(&wrs[0]); !errors.Is(err, provider.ErrFull) {
		t.Errorf("fifth receive: %v", err)
	}
	if err := q.rq.Put(&provider.RecvWR{SGE: make([]provider.SGE, 3)}); !errors.Is(err, provider.ErrFull) {
		t.Errorf("three SGEs on a full queue: %v", err)
	}
}

// TestNoAllocs: posting, flushing, polling and arming allocate nothing.
func TestNoAllocs(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	q := newQP(t, c, qpOpts{sendWR: 64, sendSGE: 1, recvWR: 64, recvSGE: 1, qpn: 1, bfreg: 1})
	data := userBuf(t, 16)
	send := provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_SIGNALED, SGE: []provider.SGE{sge1}}
	inline := provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_INLINE, SGE: []provider.SGE{{Addr: mem.Addr(data), Length: 16}}}
	recv := provider.RecvWR{SGE: []provider.SGE{sge1}}
	wc := make([]provider.WC, 4)
	full := provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND}
	sendCQE := cqeFields{sopDropQPN: 0x0a000001}.bytes()
	recvCQE := cqeFields{opOwn: cqeRespSendI << 4, sopDropQPN: 1, byteCnt: 8}.bytes()
	polled := 0
	if n := testing.AllocsPerRun(200, func() {
		q.sq.Put(&send)
		q.sq.Put(&inline)
		q.sq.Flush()
		q.rq.Put(&recv)
		q.rq.Flush()
		ci := q.sendCQ.consIndex.Load()
		putCQE(q.sendCQ, ci, sendCQE)
		putCQE(q.sendCQ, ci+1, recvCQE)
		polled += q.sendCQ.Poll(wc)
		q.sendCQ.Arm(false)
		q.sendCQ.Take(&wc[0])
		q.sendCQ.Release()
		q.sq.tail.Store(q.sq.head.Load())
		q.rq.tail.Store(q.rq.head.Load())
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
	if polled != 2*201 {
		t.Errorf("polled %d completions, want %d", polled, 2*201)
	}
	for i := 0; i < 64; i++ {
		q.sq.Put(&full)
	}
	if n := testing.AllocsPerRun(100, func() { q.sq.Put(&full) }); n != 0 {
		t.Errorf("a refused Put: %v allocations", n)
	}
}

// TestModified: sends wait for RTS and receives for INIT once the QP
// knows its state; a move to RESET empties the QP's CQEs from its CQ and
// starts the queues and the doorbell record over.
func TestModified(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	q := newQP(t, c, qpOpts{sendWR: 4, sendSGE: 1, recvWR: 4, recvSGE: 1, qpn: 3})
	send := provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND}
	recv := provider.RecvWR{}
	if q.sq.Put(&send) != nil || q.rq.Put(&recv) != nil {
		t.Fatal("before any Modified, requests are refused")
	}
	q.sq.Flush()
	q.rq.Flush()
	putCQE(q.sendCQ, 0, cqeFields{sopDropQPN: 0x0a000003}.bytes())
	q.sq.Modified(abi.IB_QPS_RESET)
	if q.sq.head.Load() != 0 || q.sq.curPost != 0 || q.rq.head.Load() != 0 || !bytes.Equal(q.db.b, make([]byte, 8)) {
		t.Errorf("after RESET: send head %d, blocks %d, receive head %d, record % x", q.sq.head.Load(), q.sq.curPost, q.rq.head.Load(), q.db.b)
	}
	if q.sendCQ.consIndex.Load() != 1 {
		t.Errorf("the QP's CQE is still in the CQ")
	}
	for _, tc := range []struct {
		state          uint32
		sendOK, recvOK bool
	}{
		{abi.IB_QPS_RESET, false, false},
		{abi.IB_QPS_INIT, false, true},
		{abi.IB_QPS_RTR, false, true},
		{abi.IB_QPS_RTS, true, true},
		{abi.IB_QPS_ERR, true, true},
	} {
		q.sq.Modified(tc.state)
		if err := q.sq.Put(&send); (err == nil) != tc.sendOK {
			t.Errorf("state %d: send: %v", tc.state, err)
		}
		if err := q.rq.Put(&recv); (err == nil) != tc.recvOK {
			t.Errorf("state %d: receive: %v", tc.state, err)
		}
		q.sq.Flush()
		q.rq.Flush()
	}
}

// TestPutFast: the straight path for sends, RDMA writes and reads on RC
// and UC (PutPlain) leaves the bytes and the queue's state the general
// path (put) leaves, over queues full of garbage, for every flag, gather
// lists with empty entries, WQEs that wrap, batches of two, and a fence
// left pending (which sends the first request of the batch the general
// way). Both queues post as uverbs does (postPlain) and flush.
func TestPutFast(t *testing.T) {
	// postPlain posts wrs as uverbs' PostSend does: runs of plain
	// requests through PutPlain, each other request through Put, then
	// Flush if PutPlain did not; it returns how many PutPlain took.
	postPlain := func(t *testing.T, s *sendQueue, wrs []provider.SendWR) (plain int) {
		t.Helper()
		for n := 0; ; n++ {
			k, err := s.PutPlain(wrs[n:])
			if err != nil && err != provider.ErrStop {
				t.Fatal(err)
			}
			plain += k
			if n += k; n == len(wrs) {
				return plain
			}
			if err := s.Put(&wrs[n]); err != nil {
				t.Fatal(err)
			}
			if n == len(wrs)-1 {
				if err := s.Flush(); err != nil {
					t.Fatal(err)
				}
				return plain
			}
		}
	}
	sges := []provider.SGE{{Addr: 0x1122334455667788, Length: 0x1000, LKey: 0xabcd}, {Addr: 0x99, Length: 0, LKey: 1},
		{Addr: 0x2000, Length: 8, LKey: 0x55}, {Addr: 0x3000, Length: 9, LKey: 0x56}, {Addr: 0x4000, Length: 10, LKey: 0x57}}
	ops := []uint32{abi.IB_UVERBS_WR_SEND, abi.IB_UVERBS_WR_SEND_WITH_IMM, abi.IB_UVERBS_WR_SEND_WITH_INV,
		abi.IB_UVERBS_WR_RDMA_WRITE, abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, abi.IB_UVERBS_WR_RDMA_READ}
	starts := []struct {
		name       string
		curPost    uint32 // from the end of the queue
		head, pend uint32
		fence      uint8
	}{
		{"last block", 1, 0, 0, 0},
		{"last block, fence pending", 1, 0, 0, ctrlFence},
		{"two from the end, after a batch", 2, 5, 1, 0},
		{"start", 0, 3, 0, 0},
	}
	for _, typ := range []uint8{abi.IB_UVERBS_QPT_RC, abi.IB_UVERBS_QPT_UC} {
		c := openCtx(t, newFakeDev(t), ucontextResp(true))
		fast := newQP(t, c, qpOpts{typ: typ, sendWR: 4, sendSGE: 5, qpn: 0x123, bfreg: 1})
		general := newQP(t, c, qpOpts{typ: typ, sendWR: 4, sendSGE: 5, qpn: 0x123, bfreg: 1})
		used := 0
		for _, st := range starts {
			for _, op := range ops {
				if typ == abi.IB_UVERBS_QPT_UC && op == abi.IB_UVERBS_WR_RDMA_READ {
					continue // UC has no reads: libmlx5 writes no remote address, and neither path is fast
				}
				for flags := range uint32(fmFlags + 1) {
					for n := range len(sges) + 1 {
						name := fmt.Sprintf("type %d, %s: opcode %d flags %#x %d SGEs", typ, st.name, op, flags, n)
						wr := provider.SendWR{ID: uint64(op)<<8 | uint64(flags), Opcode: op, Flags: flags, SGE: sges[:n],
							Imm: 0xa1b2c3d4, RemoteAddr: 0xdeadbeef00, RKey: 0x4321}
						for _, q := range []*qp{fast, general} {
							s := &q.sq
							s.curPost = (s.wqeCnt - st.curPost) % s.wqeCnt
							s.head.Store(st.head)
							s.tail.Store(st.head)
							s.pending = st.pend
							s.fence = st.fence
							s.setFast()
							garbage(q.buf[s.off:s.end()])
							clear(s.wrid)
							clear(s.wqeHead)
							s.SetPlainOps(^uint32(0))
							if q == general {
								s.fast = [len(s.fast)]fastOp{}
							} else if st.fence == 0 && s.fast[op].opcode == 0 {
								t.Fatalf("%s: not on the fast path", name)
							}
							var wrs [2]provider.SendWR
							for i := range wrs {
								wrs[i] = wr
								wrs[i].ID = uint64(op)<<8 | uint64(flags) | uint64(i)<<32
							}
							fastN := postPlain(t, s, wrs[:])
							if q == fast && fastN != len(wrs)-int(min(st.fence, 1)) {
								t.Fatalf("%s: PutPlain took %d of %d", name, fastN, len(wrs))
							}
						}
						p, g := fast.buf[fast.sq.off:fast.sq.end()], general.buf[general.sq.off:general.sq.end()]
						if !bytes.Equal(p, g) {
							t.Errorf("%s: queue\n% x\nwant\n% x", name, p, g)
						}
						ps, gs := &fast.sq, &general.sq
						type state struct {
							curPost, pending   uint32
							lastCtrl, lastSize int
							fence              uint8
						}
						if p, g := (state{ps.curPost, ps.pending, ps.lastCtrl, ps.lastSize, ps.fence}),
							(state{gs.curPost, gs.pending, gs.lastCtrl, gs.lastSize, gs.fence}); p != g {
							t.Errorf("%s: state %+v, want %+v", name, p, g)
						}
						if !slices.Equal(ps.wrid, gs.wrid) || !slices.Equal(ps.wqeHead, gs.wqeHead) {
							t.Errorf("%s: wr_ids %x heads %d, want %x %d", name, ps.wrid, ps.wqeHead, gs.wrid, gs.wqeHead)
						}
						used++
					}
				}
			}
		}
		if used == 0 {
			t.Fatal("no request compared")
		}
	}
}

// TestSetReg: a bfreg is usable (base set) only when the doorbell word
// and both BlueFlame halves are inside its page and aligned, which Flush
// no longer checks.
func TestSetReg(t *testing.T) {
	page := make([]byte, 4096)
	for _, tc := range []struct {
		name         string
		reg, bufSize int
		uuarn        int
		ok           bool
		bfMax        int
	}{
		{"bfreg 1", bfOffset, 256, 1, true, 16},
		{"last bfreg of the page", bfOffset + 3*512, 256, 3, true, 16},
		{"bfreg 0: no BlueFlame", bfOffset, 0, 0, true, 0},
		{"doorbell only, at the page's end", 4096 - 8, 0, 0, true, 0},
		{"halves past the page", bfOffset + 3*512 + 8, 256, 3, false, 16},
		{"misaligned register", bfOffset + 4, 256, 1, false, 16},
		{"halves not whole blocks", bfOffset, 100, 1, false, 6},
		{"doorbell past the page", 4096, 0, 0, false, 0},
		{"negative", -8, 0, 0, false, 0},
	} {
		bf := bfreg{bufSize: tc.bufSize, uuarn: tc.uuarn}
		bf.setReg(page, tc.reg)
		if (bf.base != nil) != tc.ok || bf.bfMax != tc.bfMax {
			t.Errorf("%s: base %v, bfMax %d; want usable %v, %d", tc.name, bf.base, bf.bfMax, tc.ok, tc.bfMax)
		}
		if tc.ok && bf.base != unsafe.Pointer(&page[tc.reg]) {
			t.Errorf("%s: base not the register", tc.name)
		}
	}
}

package rxe

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

// wqeImage decodes the hex bytes of an expected WQE, written one line per
// 8 bytes with the fields they hold after "//".
func wqeImage(t *testing.T, s string) []byte {
	t.Helper()
	var h strings.Builder
	for _, line := range strings.Split(s, "\n") {
		line, _, _ = strings.Cut(line, "//")
		h.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(h.String())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The 18 lines of zeros from the end of a 24-byte union member to the end
// of the union, for the cases below.
const unionTail = `
00 00 00 00 00 00 00 00 // 48
00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00 // 136, the union ends at 144
`

// TestSQPutFlushAtomicWrite checks the WQE of RDMA FLUSH and ATOMIC WRITE
// byte by byte against what rdma-core's providers/rxe (wr_flush,
// wr_atomic_write) writes: the flush in wr.flush with its length in
// dma.length and dma.resid only; the atomic write's address in wr.rdma and
// its 8 bytes in dma.atomic_wr at offset 208; iova set for both, no SGEs.
func TestSQPutFlushAtomicWrite(t *testing.T) {
	tests := []struct {
		name string
		wr   provider.SendWR
		want string
	}{{
		name: "flush global range",
		wr: provider.SendWR{ID: 0x1122334455667788, Opcode: abi.IB_UVERBS_WR_FLUSH, Flags: abi.IB_SEND_SIGNALED,
			RemoteAddr: 0x7f0012345678, RKey: 0xaabbccdd, Length: 0x1000, FlushType: abi.IB_FLUSH_GLOBAL, FlushLevel: abi.IB_FLUSH_RANGE},
		want: `
88 77 66 55 44 33 22 11 // wr_id
00 00 00 00 0e 00 00 00 // reserved, opcode 14
02 00 00 00 00 00 00 00 // send_flags SIGNALED, ex
78 56 34 12 00 7f 00 00 // wr.flush.remote_addr
00 00 00 00 dd cc bb aa // wr.flush.length (0, as rdma-core), rkey
01 00 00 00 00 00 00 00 // type GLOBAL, level RANGE
` + unionTail + `
ee ee ee ee 00 00 00 00 // status (stale, see withStale), state
78 56 34 12 00 7f 00 00 // iova
ee ee ee ee ee ee ee ee // mask, first_psn (stale)
ee ee ee ee ee ee ee ee // last_psn, ack_length (stale)
00 00 00 00 ee ee ee ee // ssn, has_rd_atomic (stale)
00 10 00 00 00 10 00 00 // dma.length, dma.resid
00 00 00 00 00 00 00 00 // cur_sge, num_sge 0
00 00 00 00 ee ee ee ee // sge_offset, reserved (stale)
ee ee ee ee ee ee ee ee // 208: nothing follows, stale
`,
	}, {
		name: "flush persistent MR",
		wr: provider.SendWR{ID: 2, Opcode: abi.IB_UVERBS_WR_FLUSH, Flags: abi.IB_SEND_SIGNALED | abi.IB_SEND_FENCE,
			RemoteAddr: 0x1000, RKey: 0x11, FlushType: abi.IB_FLUSH_PERSISTENT, FlushLevel: abi.IB_FLUSH_MR},
		want: `
02 00 00 00 00 00 00 00 // wr_id
00 00 00 00 0e 00 00 00 // reserved, opcode 14
03 00 00 00 00 00 00 00 // send_flags FENCE|SIGNALED, ex
00 10 00 00 00 00 00 00 // wr.flush.remote_addr
00 00 00 00 11 00 00 00 // wr.flush.length, rkey
02 01 00 00 00 00 00 00 // type PERSISTENT, level MR
` + unionTail + `
ee ee ee ee 00 00 00 00 // status (stale, see withStale), state
00 10 00 00 00 00 00 00 // iova
ee ee ee ee ee ee ee ee // mask, first_psn (stale)
ee ee ee ee ee ee ee ee // last_psn, ack_length (stale)
00 00 00 00 ee ee ee ee // ssn, has_rd_atomic (stale)
00 00 00 00 00 00 00 00 // dma.length, dma.resid: 0 bytes
00 00 00 00 00 00 00 00 // cur_sge, num_sge 0
00 00 00 00 ee ee ee ee // sge_offset, reserved (stale)
ee ee ee ee ee ee ee ee // 208: nothing follows, stale
`,
	}, {
		name: "atomic write",
		wr: provider.SendWR{ID: 0xabcdef, Opcode: abi.IB_UVERBS_WR_ATOMIC_WRITE, Flags: abi.IB_SEND_SIGNALED,
			RemoteAddr: 0x7f0012345678, RKey: 0xaabbccdd, AtomicData: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}},
		want: `
ef cd ab 00 00 00 00 00 // wr_id
00 00 00 00 0f 00 00 00 // reserved, opcode 15
02 00 00 00 00 00 00 00 // send_flags SIGNALED, ex
78 56 34 12 00 7f 00 00 // wr.rdma.remote_addr
dd cc bb aa 00 00 00 00 // wr.rdma.rkey, reserved
00 00 00 00 00 00 00 00
` + unionTail + `
ee ee ee ee 00 00 00 00 // status (stale, see withStale), state
78 56 34 12 00 7f 00 00 // iova
ee ee ee ee ee ee ee ee // mask, first_psn (stale)
ee ee ee ee ee ee ee ee // last_psn, ack_length (stale)
00 00 00 00 ee ee ee ee // ssn, has_rd_atomic (stale)
08 00 00 00 08 00 00 00 // dma.length, dma.resid: 8
00 00 00 00 00 00 00 00 // cur_sge, num_sge 0
00 00 00 00 ee ee ee ee // sge_offset, reserved (stale)
01 02 03 04 05 06 07 08 // 208: dma.atomic_wr
`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := wqeImage(t, tt.want)
			if len(want) != 216 {
				t.Fatalf("expected image has %d bytes, want 216", len(want))
			}
			dev, s, _, sqBuf, _ := newQP(t, rcInit, 8, 4)
			slot := slotOf(sqBuf, 0)
			for i := range slot {
				slot[i] = 0xee // a previous request's and the kernel's bytes
			}
			if err := s.Put(&tt.wr); err != nil {
				t.Fatal(err)
			}
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := slot[:len(want)]; !bytes.Equal(got, want) {
				t.Errorf("WQE:\n got %x\nwant %x", got, want)
			}
			if rest := slot[len(want):]; !bytes.Equal(rest, bytes.Repeat([]byte{0xee}, len(rest))) {
				t.Errorf("slot tail written: % x", rest)
			}
			if p := producer(sqBuf); p != 1 || dev.doorbells != 1 {
				t.Errorf("producer = %d, doorbells = %d, want 1 and 1", p, dev.doorbells)
			}
		})
	}
}

func TestSQPutFlushAtomicWriteErrors(t *testing.T) {
	sge := []provider.SGE{{Addr: 0x1000, Length: 8, LKey: 1}}
	tests := []struct {
		name string
		wr   provider.SendWR
		want error
	}{
		{"flush with an SGE", provider.SendWR{Opcode: abi.IB_UVERBS_WR_FLUSH, FlushType: abi.IB_FLUSH_GLOBAL, SGE: sge}, provider.ErrInvalid},
		{"atomic write with an SGE", provider.SendWR{Opcode: abi.IB_UVERBS_WR_ATOMIC_WRITE, SGE: sge}, provider.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev, s, _, sqBuf, _ := newQP(t, rcInit, 8, 4)
			if err := s.Put(&tt.wr); !errors.Is(err, tt.want) {
				t.Fatalf("Put = %v, want %v", err, tt.want)
			}
			if err := s.Flush(); err != nil || dev.doorbells != 0 || producer(sqBuf) != 0 {
				t.Errorf("after a refused Put: Flush = %v, doorbells = %d, producer = %d", err, dev.doorbells, producer(sqBuf))
			}
		})
	}
}

func TestSQFlushAtomicWriteAllocs(t *testing.T) {
	_, s, _, sqBuf, _ := newQP(t, rcInit, 8, 4)
	flush := &provider.SendWR{Opcode: abi.IB_UVERBS_WR_FLUSH, Flags: abi.IB_SEND_SIGNALED, RemoteAddr: 0x1000, RKey: 2,
		Length: 64, FlushType: abi.IB_FLUSH_GLOBAL}
	aw := &provider.SendWR{Opcode: abi.IB_UVERBS_WR_ATOMIC_WRITE, Flags: abi.IB_SEND_SIGNALED, RemoteAddr: 0x1008, RKey: 2,
		AtomicData: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}}
	var sqi provider.SQ = s
	allocs := testing.AllocsPerRun(100, func() {
		if sqi.Put(flush) != nil || sqi.Put(aw) != nil || sqi.Flush() != nil {
			panic("Put/Flush failed")
		}
		setConsumer(sqBuf, producer(sqBuf)) // the kernel keeps up
	})
	if allocs != 0 {
		t.Errorf("Put+Flush allocates %v times per run", allocs)
	}
}

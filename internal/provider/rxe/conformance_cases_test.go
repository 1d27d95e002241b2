package rxe

import (
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/conformance"
)

// confSetup is the QP of the scripted cases: a send queue of 16 slots of
// 512 bytes (4 SGEs or 64 inline bytes after the 208-byte header), a
// receive queue of 8 slots for 4 SGEs, an SRQ of 8 slots for 3 SGEs and a
// CQ of 8 slots, so that the cases wrap every ring many times.
var confSetup = conformance.Setup{Provider: "rxe", SQ: 16, RQ: 8, SRQ: 8, CQ: 8,
	MaxSendSGE: 4, MaxRecvSGE: 4, MaxInline: 64, SRQMaxSGE: 3}

// sendCases lists one send work request for every combination the Go
// provider supports: each opcode with each of the 16 combinations of
// FENCE, SIGNALED, SOLICITED and INLINE where the opcode takes it, and
// 0 to 4 SGEs (inline: 1 to 3 pieces of Pattern). Fields an opcode does
// not carry are left zero: rdma-core copies the imm_data and wr.rdma
// words of any request into the WQE whatever the opcode, purerdma only
// where the opcode uses them (docs/conformance.md).
func sendCases() []provider.SendWR {
	type opc struct {
		op            uint32
		imm, rdma, at bool
		inline        bool
	}
	opcodes := []opc{
		{op: abi.IB_UVERBS_WR_RDMA_WRITE, rdma: true, inline: true},
		{op: abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, rdma: true, imm: true, inline: true},
		{op: abi.IB_UVERBS_WR_SEND, inline: true},
		{op: abi.IB_UVERBS_WR_SEND_WITH_IMM, imm: true, inline: true},
		{op: abi.IB_UVERBS_WR_RDMA_READ, rdma: true},
		{op: abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, at: true},
		{op: abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD, at: true},
		{op: abi.IB_UVERBS_WR_LOCAL_INV, imm: true},
		{op: abi.IB_UVERBS_WR_SEND_WITH_INV, imm: true, inline: true},
	}
	var wrs []provider.SendWR
	id := uint64(1000)
	for _, o := range opcodes {
		for flags := uint32(0); flags < 16; flags++ {
			inline := flags&abi.IB_SEND_INLINE != 0
			if inline && !o.inline {
				continue
			}
			var sgeSets [][]provider.SGE
			switch {
			case o.at:
				sgeSets = [][]provider.SGE{{{Addr: 0x7000 + id*8, Length: 8, LKey: 0x1234}}}
			case o.op == abi.IB_UVERBS_WR_LOCAL_INV:
				sgeSets = [][]provider.SGE{nil}
			case inline:
				sgeSets = [][]provider.SGE{
					{{Addr: 5, Length: 1}},
					{{Addr: 100, Length: 20}, {Addr: 7, Length: 44}},
					{{Addr: 0, Length: 0}, {Addr: 300, Length: 33}, {Addr: 1000, Length: 31}},
				}
			default:
				for n := 0; n <= 4; n++ {
					var s []provider.SGE
					for k := range n {
						s = append(s, provider.SGE{Addr: 0x10000*uint64(k+1) + id, Length: uint32(100*k + int(id%7)), LKey: 0x500 + uint32(k)})
					}
					sgeSets = append(sgeSets, s)
				}
			}
			for _, sge := range sgeSets {
				w := provider.SendWR{ID: id, Opcode: o.op, Flags: flags, SGE: sge}
				if o.imm {
					w.Imm = 0xa1b2c300 | uint32(id&0xff)
				}
				if o.rdma {
					w.RemoteAddr, w.RKey = 0xdead0000+id*64, 0x77000+uint32(id)
				}
				if o.at {
					w.RemoteAddr, w.RKey = 0xbeef000+id*8, 0x88000+uint32(id)
					w.CompareAdd, w.Swap = 0x1111222233334444+id, 0x5555666677778888^id
				}
				wrs = append(wrs, w)
				id++
			}
		}
	}
	return wrs
}

func recvCases(maxSGE int) []provider.RecvWR {
	var wrs []provider.RecvWR
	for id := uint64(1); id <= 40; id++ {
		n := int(id) % (maxSGE + 1)
		var s []provider.SGE
		for k := range n {
			s = append(s, provider.SGE{Addr: 0x20000*uint64(k+1) + id, Length: uint32(64*k) + uint32(id), LKey: 0x600 + uint32(k)})
		}
		wrs = append(wrs, provider.RecvWR{ID: id, SGE: s})
	}
	return wrs
}

// sendScript posts the send cases in batches of up to 15 (one call, one
// doorbell each), dumping the queue after each batch and letting the
// kernel take them; then fills the ring past full in one call and posts
// once more on the full ring.
func sendScript() *conformance.Script {
	s := &conformance.Script{Setup: confSetup}
	wrs := sendCases()
	for len(wrs) > 0 {
		// Batches of 1, 2, ... 15 requests, so that single posts and
		// batches both occur and the ring wraps at every offset.
		n := min(len(wrs), 1+len(s.Ops)%15)
		s.Ops = append(s.Ops, conformance.Op{Kind: "send", Send: wrs[:n]},
			conformance.Op{Kind: "dump", Queue: "sq"},
			conformance.Op{Kind: "consume", Queue: "sq", N: uint32(n)})
		wrs = wrs[n:]
	}
	full := sendCases()[:17]
	s.Ops = append(s.Ops,
		conformance.Op{Kind: "send", Send: full}, // 15 fit
		conformance.Op{Kind: "send", Send: full[:1]},
		conformance.Op{Kind: "dump", Queue: "sq"},
		conformance.Op{Kind: "consume", Queue: "sq", N: 3},
		conformance.Op{Kind: "send", Send: full[3:9]}, // 3 fit
		conformance.Op{Kind: "dump", Queue: "sq"})
	return s
}

// recvScript posts the receive cases through kind on queue q, whose ring
// holds 7 requests.
func recvScript(kind, q string, maxSGE int) *conformance.Script {
	return conformance.RecvScript(confSetup, kind, q, recvCases(maxSGE), 7)
}

func TestConformanceSend(t *testing.T) {
	h := conformance.Harness(t)
	s := sendScript()
	t.Logf("%d send work requests in %d operations", len(sendCases()), len(s.Ops))
	check(t, h, s)
}

func TestConformanceRecv(t *testing.T) {
	h := conformance.Harness(t)
	check(t, h, recvScript("recv", "rq", 4))
}

func TestConformanceSRQRecv(t *testing.T) {
	h := conformance.Harness(t)
	check(t, h, recvScript("srecv", "srq", 3))
}

// cqeRows is the table of completions the fake kernel writes: every
// status (the errors with the opcodes they come with, round robin), every
// opcode with every flag combination the kernel sets (GRH, WITH_IMM,
// WITH_INVALIDATE), immediate data and invalidated rkeys with all four
// bytes distinct, and the other fields nonzero so that a field copied to
// the wrong place shows. Each row: wr_id status opcode vendor_err byte_len
// ex qp_num src_qp wc_flags pkey_index slid sl dlid_path_bits port_num.
func cqeRows() [][]uint64 {
	opcodes := []uint64{abi.IB_WC_SEND, abi.IB_WC_RDMA_WRITE, abi.IB_WC_RDMA_READ, abi.IB_WC_COMP_SWAP,
		abi.IB_WC_FETCH_ADD, abi.IB_WC_BIND_MW, abi.IB_WC_LOCAL_INV, abi.IB_WC_RECV, abi.IB_WC_RECV_RDMA_WITH_IMM}
	flagSets := []uint64{0, abi.IB_WC_GRH, abi.IB_WC_WITH_IMM, abi.IB_WC_WITH_INVALIDATE, abi.IB_WC_GRH | abi.IB_WC_WITH_IMM}
	var rows [][]uint64
	id := uint64(0x100000000)
	row := func(status, opcode, flags uint64) {
		id++
		rows = append(rows, []uint64{id, status, opcode, status * 3, 4096 + id%1000, 0x0a0b0c00 | id&0xff,
			0x11, 0x2200 + id%16, flags, id % 5, 0x300 + id%7, id % 16, id % 128, 1})
	}
	for status := uint64(abi.IB_WC_SUCCESS); status <= abi.IB_WC_GENERAL_ERR; status++ {
		row(status, opcodes[status%uint64(len(opcodes))], 0)
	}
	for _, op := range opcodes {
		for _, f := range flagSets {
			row(abi.IB_WC_SUCCESS, op, f)
		}
	}
	return rows
}

// cqScript feeds the rows through a CQ of 8 slots: up to 7 completions at
// a time, polled with 1, 3 and 16 entries, and polls of the empty ring.
func cqScript() *conformance.Script {
	s := &conformance.Script{Setup: confSetup}
	rows := cqeRows()
	s.Ops = append(s.Ops, conformance.Op{Kind: "poll", N: 4}) // empty
	for i := 0; len(rows) > 0; i++ {
		n := min(len(rows), 1+i%7)
		for _, r := range rows[:n] {
			s.Ops = append(s.Ops, conformance.Op{Kind: "cqe", CQE: r})
		}
		rows = rows[n:]
		for _, p := range []uint32{1, 3, 16} {
			s.Ops = append(s.Ops, conformance.Op{Kind: "poll", N: p})
		}
		s.Ops = append(s.Ops, conformance.Op{Kind: "dump", Queue: "cq"})
	}
	return s
}

func TestConformanceCQ(t *testing.T) {
	h := conformance.Harness(t)
	t.Logf("%d completions", len(cqeRows()))
	check(t, h, cqScript())
}

// TestConformanceNamesField is the comparison's own check: one byte of
// one Go slot changed (what a one-byte slip in Put would write) must make
// exactly one difference, naming the slot and the field. The byte is in
// the remote address of the first request, an RDMA write.
func TestConformanceNamesField(t *testing.T) {
	h := conformance.Harness(t)
	s := sendScript()
	cLines := conformance.RunC(t, h, s)
	goLines := newGoSide(t, s.Setup).Run(t, s)
	published(t, goLines, cLines)
	knownDoorbells(goLines, cLines)
	for i, l := range goLines {
		if strings.HasPrefix(l, "slot sq 0 ") {
			// The record is "slot sq 0 " then the hex: byte 26 of the
			// slot is the third byte of wr.rdma.remote_addr (0xdead0000
			// + 64*1000 = 0xdeadfa00, so 0xad).
			b := []byte(l)
			at := len("slot sq 0 ") + 2*26
			if string(b[at:at+2]) != "ad" {
				t.Fatalf("byte 26 of the first WQE is %s, want ad", b[at:at+2])
			}
			b[at+1] = 'c'
			goLines[i] = string(b)
			break
		}
	}
	diffs := conformance.Diff("rxe", goLines, cLines, nameField, nil)
	want := "rxe after op 0 (send): sq slot 0: Wr.Wr.rdma.RemoteAddr at offset 24: Go 0xdeacfa00 C 0xdeadfa00"
	if len(diffs) != 1 || diffs[0] != want {
		t.Errorf("differences %q, want [%q]", diffs, want)
	}
}

// udSendCases: SEND and SEND_WITH_IMM on a UD QP with each of the 16 flag
// combinations and 0 to 4 SGEs or 1 to 3 inline pieces, to a remote QP
// number and Q_Key that change with the request.
func udSendCases() []provider.SendWR {
	var wrs []provider.SendWR
	id := uint64(5000)
	for _, w := range sendCases() {
		if w.Opcode != abi.IB_UVERBS_WR_SEND && w.Opcode != abi.IB_UVERBS_WR_SEND_WITH_IMM {
			continue
		}
		w.ID = id
		w.RemoteQPN, w.RemoteQKey = 0x100+uint32(id), 0x11110000|uint32(id)
		wrs = append(wrs, w)
		id++
	}
	return wrs
}

func TestConformanceUDSend(t *testing.T) {
	h := conformance.Harness(t)
	setup := confSetup
	setup.Provider = "rxe-ud"
	s := &conformance.Script{Setup: setup}
	wrs := udSendCases()
	t.Logf("%d UD send work requests", len(wrs))
	for i := 0; len(wrs) > 0; i++ {
		n := min(len(wrs), 1+i%15)
		s.Ops = append(s.Ops, conformance.Op{Kind: "send", Send: wrs[:n]},
			conformance.Op{Kind: "dump", Queue: "sq"},
			conformance.Op{Kind: "consume", Queue: "sq", N: uint32(n)})
		wrs = wrs[n:]
	}
	check(t, h, s)
}

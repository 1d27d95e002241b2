package siw

import (
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/conformance"
)

// FuzzConformance makes a random script from the fuzzer's bytes — post
// batches of every send opcode, flag, SGE and inline shape both libsiw
// and we take (see sendCases), receives and SRQ receives, the kernel
// taking any number of the posted elements in order, the kernel writing
// completions, polls of any size, arming, dumps — and requires the C
// provider and ours to leave the same transcript. Skips without the C
// harness.
func FuzzConformance(f *testing.F) {
	f.Add([]byte{0, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 4, 0, 1, 5})
	f.Add([]byte{0, 19, 0xff, 0x7f, 3, 9, 1, 2, 2, 7, 0x40, 6, 3, 4, 1, 8, 5, 200, 5, 15})
	f.Fuzz(func(t *testing.T, data []byte) {
		h := conformance.Harness(t)
		check(t, h, fuzzScript(data))
	})
}

// fuzzScript turns data into a script on confSetup, tracking how many
// elements of each work queue are valid and not yet taken, so that the
// fake kernel takes only those.
func fuzzScript(data []byte) *conformance.Script {
	r := conformance.NewBytes(data)
	s := &conformance.Script{Setup: confSetup}
	out := map[string]uint32{}
	capacity := map[string]uint32{"sq": confSetup.SQ, "rq": confSetup.RQ, "srq": confSetup.SRQ}
	id := uint64(1)
	for r.Left() && len(s.Ops) < 64 {
		switch r.N(7) {
		case 0:
			n := 1 + r.N(20)
			var wrs []provider.SendWR
			for range n {
				wrs = append(wrs, fuzzSend(r, id))
				id++
			}
			s.Ops = append(s.Ops, conformance.Op{Kind: "send", Send: wrs})
			out["sq"] = min(capacity["sq"], out["sq"]+uint32(n))
		case 1, 2:
			kind, q, maxSGE := "recv", "rq", int(confSetup.MaxRecvSGE)
			if r.N(2) == 1 {
				kind, q, maxSGE = "srecv", "srq", int(confSetup.SRQMaxSGE)
			}
			n := 1 + r.N(12)
			var wrs []provider.RecvWR
			for range n {
				var sge []provider.SGE
				for range 1 + r.N(maxSGE) { // libsiw refuses none
					sge = append(sge, provider.SGE{Addr: r.U64(), Length: r.U32(), LKey: r.U32()})
				}
				wrs = append(wrs, provider.RecvWR{ID: id, SGE: sge})
				id++
			}
			s.Ops = append(s.Ops, conformance.Op{Kind: kind, Recv: wrs})
			out[q] = min(capacity[q], out[q]+uint32(n))
		case 3:
			q := []string{"sq", "rq", "srq"}[r.N(3)]
			if out[q] > 0 {
				k := uint32(r.N(int(out[q]) + 1))
				s.Ops = append(s.Ops, conformance.Op{Kind: "consume", Queue: q, N: k})
				out[q] -= k
			}
		case 4:
			opcodes := []uint64{abi.SIW_OP_WRITE, abi.SIW_OP_READ, abi.SIW_OP_READ_LOCAL_INV, abi.SIW_OP_SEND,
				abi.SIW_OP_SEND_WITH_IMM, abi.SIW_OP_SEND_REMOTE_INV, abi.SIW_OP_FETCH_AND_ADD,
				abi.SIW_OP_COMP_AND_SWAP, abi.SIW_OP_RECEIVE}
			// No more than the CQ holds: the kernel never writes
			// over a valid element.
			for range min(r.N(10), int(confSetup.CQ-out["cq"])) {
				out["cq"]++
				// Flags: VALID and any of the bits but REM_INVAL
				// (see cqeRows).
				flags := uint64(abi.SIW_WQE_VALID | r.U8()&^abi.SIW_WQE_REM_INVAL)
				s.Ops = append(s.Ops, conformance.Op{Kind: "cqe", CQE: []uint64{r.U64(), flags,
					opcodes[r.N(len(opcodes))], uint64(r.N(abi.SIW_NUM_WC_STATUS)), uint64(r.U32()), r.U64(), r.U64()}})
			}
			n := uint32(r.N(17))
			s.Ops = append(s.Ops, conformance.Op{Kind: "poll", N: n})
			out["cq"] -= min(n, out["cq"])
		case 5:
			s.Ops = append(s.Ops, conformance.Op{Kind: "arm", N: uint32(r.N(2))})
		case 6:
			s.Ops = append(s.Ops, conformance.Op{Kind: "dump", Queue: []string{"sq", "rq", "srq", "cq"}[r.N(4)]})
		}
	}
	for _, q := range []string{"sq", "rq", "srq", "cq"} {
		s.Ops = append(s.Ops, conformance.Op{Kind: "dump", Queue: q})
	}
	return s
}

// fuzzSend makes one send request both providers take.
func fuzzSend(r *conformance.Bytes, id uint64) provider.SendWR {
	ops := []uint32{abi.IB_UVERBS_WR_RDMA_WRITE, abi.IB_UVERBS_WR_SEND, abi.IB_UVERBS_WR_RDMA_READ, abi.IB_UVERBS_WR_SEND_WITH_INV}
	w := provider.SendWR{ID: id, Opcode: ops[r.N(len(ops))], Flags: uint32(r.N(16))}
	switch w.Opcode {
	case abi.IB_UVERBS_WR_RDMA_READ:
		w.Flags &^= abi.IB_SEND_INLINE | abi.IB_SEND_FENCE
		w.RemoteAddr, w.RKey = r.U64(), r.U32()
		w.SGE = []provider.SGE{{Addr: r.U64(), Length: r.U32(), LKey: r.U32()}}
		return w
	case abi.IB_UVERBS_WR_RDMA_WRITE:
		w.RemoteAddr, w.RKey = r.U64(), r.U32()
	case abi.IB_UVERBS_WR_SEND_WITH_INV:
		w.Flags &^= abi.IB_SEND_INLINE
		w.Imm = r.U32()
		w.RKey = w.Imm // libsiw takes the STag from wr.rdma.rkey
	}
	if w.Flags&abi.IB_SEND_INLINE != 0 {
		w.SGE = r.InlineSGEs(int(confSetup.MaxInline), 64)
		return w
	}
	w.SGE = r.SGEs(int(confSetup.MaxSendSGE), 0)
	return w
}

package rxe

import (
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/conformance"
)

// FuzzConformance makes a random script from the fuzzer's bytes — post
// batches of every send opcode, flag, SGE and inline shape, receives and
// SRQ receives, the kernel taking any number of the posted slots, the
// kernel writing any completions, polls of any size, dumps — and requires
// the C provider and ours to leave the same transcript. The script keeps
// to requests both sides take (see sendCases) and the kernel takes only
// what was posted; what goes in the ring, the indices, the doorbells and
// the completions are free. Skips without the C harness.
func FuzzConformance(f *testing.F) {
	f.Add([]byte{0, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 4, 0, 1, 5})
	f.Add([]byte{0, 19, 0xff, 0x7f, 3, 9, 1, 2, 2, 7, 0x40, 6, 3, 4, 1, 8, 5, 200, 5, 15})
	f.Fuzz(func(t *testing.T, data []byte) {
		h := conformance.Harness(t)
		s := fuzzScript(data)
		check(t, h, s)
	})
}

// fuzzScript turns data into a script on confSetup. It tracks how many
// slots of each work queue are posted and not yet taken, so that the fake
// kernel takes no more than that: both sides would then disagree only
// about a kernel no real one is.
func fuzzScript(data []byte) *conformance.Script {
	r := conformance.NewBytes(data)
	s := &conformance.Script{Setup: confSetup}
	// One input in four runs on a UD QP, whose sends are SEND and
	// SEND_WITH_IMM to an address handle.
	ud := r.N(4) == 0
	if ud {
		s.Provider = "rxe-ud"
	}
	out := map[string]uint32{}
	capacity := map[string]uint32{"sq": confSetup.SQ - 1, "rq": confSetup.RQ - 1, "srq": confSetup.SRQ - 1}
	id := uint64(1)
	for r.Left() && len(s.Ops) < 64 {
		switch r.N(6) {
		case 0: // send batch
			n := 1 + r.N(20)
			var wrs []provider.SendWR
			for range n {
				w := fuzzSend(r, id)
				if ud {
					w = provider.SendWR{ID: id, Opcode: abi.IB_UVERBS_WR_SEND, Flags: w.Flags, SGE: w.SGE,
						RemoteQPN: r.U32() & 0xffffff, RemoteQKey: r.U32()}
					if w.Flags&abi.IB_SEND_INLINE == 0 && r.N(2) == 1 {
						w.Opcode, w.Imm = abi.IB_UVERBS_WR_SEND_WITH_IMM, r.U32()
					}
				}
				wrs = append(wrs, w)
				id++
			}
			s.Ops = append(s.Ops, conformance.Op{Kind: "send", Send: wrs})
			out["sq"] = min(capacity["sq"], out["sq"]+uint32(n))
		case 1, 2: // recv or srecv batch
			kind, q, maxSGE := "recv", "rq", int(confSetup.MaxRecvSGE)
			if r.N(2) == 1 {
				kind, q, maxSGE = "srecv", "srq", int(confSetup.SRQMaxSGE)
			}
			n := 1 + r.N(12)
			var wrs []provider.RecvWR
			for range n {
				// Totals below 4 GiB: our Put refuses more, librxe
				// wraps its int sum (docs/conformance.md).
				wrs = append(wrs, provider.RecvWR{ID: id, SGE: r.SGEs(maxSGE, 4)})
				id++
			}
			s.Ops = append(s.Ops, conformance.Op{Kind: kind, Recv: wrs})
			out[q] = min(capacity[q], out[q]+uint32(n))
		case 3: // the kernel takes slots
			q := []string{"sq", "rq", "srq"}[r.N(3)]
			if out[q] > 0 {
				k := uint32(r.N(int(out[q]) + 1))
				s.Ops = append(s.Ops, conformance.Op{Kind: "consume", Queue: q, N: k})
				out[q] -= k
			}
		case 4: // completions, then a poll
			// No more than the CQ holds: a kernel never overruns it
			// (it reports an overflow instead), and a ring overrun
			// looks empty to librxe.
			for range min(r.N(10), int(confSetup.CQ-1-out["cq"])) {
				st := uint64(r.N(abi.IB_WC_GENERAL_ERR + 1))
				ops := []uint64{0, 1, 2, 3, 4, 5, 6, abi.IB_WC_RECV, abi.IB_WC_RECV_RDMA_WITH_IMM}
				s.Ops = append(s.Ops, conformance.Op{Kind: "cqe", CQE: []uint64{r.U64(), st, ops[r.N(len(ops))],
					uint64(r.U32()), uint64(r.U32()), uint64(r.U32()), uint64(r.U32()), uint64(r.U32()),
					uint64(r.N(8)), uint64(r.U8()), uint64(r.U8()), uint64(r.N(16)), uint64(r.U8()), 1}})
				out["cq"]++
			}
			n := uint32(r.N(17))
			s.Ops = append(s.Ops, conformance.Op{Kind: "poll", N: n})
			out["cq"] -= min(n, out["cq"])
		case 5:
			s.Ops = append(s.Ops, conformance.Op{Kind: "dump", Queue: []string{"sq", "rq", "srq", "cq"}[r.N(4)]})
		}
	}
	// The state at the end, whatever the script did.
	for _, q := range []string{"sq", "rq", "srq", "cq"} {
		s.Ops = append(s.Ops, conformance.Op{Kind: "dump", Queue: q})
	}
	return s
}

// fuzzSend makes one send request both providers take (see sendCases).
func fuzzSend(r *conformance.Bytes, id uint64) provider.SendWR {
	ops := []uint32{abi.IB_UVERBS_WR_RDMA_WRITE, abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, abi.IB_UVERBS_WR_SEND,
		abi.IB_UVERBS_WR_SEND_WITH_IMM, abi.IB_UVERBS_WR_RDMA_READ, abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP,
		abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD, abi.IB_UVERBS_WR_LOCAL_INV, abi.IB_UVERBS_WR_SEND_WITH_INV}
	w := provider.SendWR{ID: id, Opcode: ops[r.N(len(ops))], Flags: uint32(r.N(16))}
	switch w.Opcode {
	case abi.IB_UVERBS_WR_RDMA_READ, abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD,
		abi.IB_UVERBS_WR_LOCAL_INV:
		w.Flags &^= abi.IB_SEND_INLINE
	}
	switch w.Opcode {
	case abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, abi.IB_UVERBS_WR_SEND_WITH_IMM,
		abi.IB_UVERBS_WR_LOCAL_INV, abi.IB_UVERBS_WR_SEND_WITH_INV:
		w.Imm = r.U32()
	}
	switch w.Opcode {
	case abi.IB_UVERBS_WR_RDMA_WRITE, abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, abi.IB_UVERBS_WR_RDMA_READ:
		w.RemoteAddr, w.RKey = r.U64(), r.U32()
	case abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		w.RemoteAddr, w.RKey, w.CompareAdd, w.Swap = r.U64()&^7, r.U32(), r.U64(), r.U64()
		w.SGE = []provider.SGE{{Addr: r.U64(), Length: 8, LKey: r.U32()}}
		return w
	case abi.IB_UVERBS_WR_LOCAL_INV:
		return w
	}
	if w.Flags&abi.IB_SEND_INLINE != 0 {
		w.SGE = r.InlineSGEs(int(confSetup.MaxInline), 64)
		return w
	}
	// Lengths small enough that the total stays below 2^31, which our Put
	// refuses and librxe does not check.
	w.SGE = r.SGEs(int(confSetup.MaxSendSGE), 4)
	return w
}

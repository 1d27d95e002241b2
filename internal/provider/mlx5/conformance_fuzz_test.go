package mlx5_test

import (
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/conformance"
)

// FuzzConformance makes a random script from the fuzzer's bytes — post
// batches of every send opcode, flag, SGE and inline shape (past the
// queue's end too), receives and SRQ receives, the device completing any
// outstanding request with a CQE of any kind, status and field values,
// polls of any size, arming, moves of the QP through ERR or RESET and
// back to RTS, dumps — on an RC QP with an RQ or with an
// SRQ, or a UD QP, and requires libmlx5 and our driver to leave the same
// transcript. The script keeps to what both take and to what a device
// does: CQEs name posted WQEs (a requester CQE the first block of one, an
// SRQ CQE a posted SRQ WQE), the CQ is never overrun, and no CQE asks the
// library to copy data scattered into it (the addresses are not real).
// Skips without the C harness.
func FuzzConformance(f *testing.F) {
	f.Add([]byte{0, 0, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 4, 0, 1, 5, 3, 3, 2, 1})
	f.Add([]byte{1, 0, 19, 0xff, 0x7f, 3, 9, 1, 2, 2, 7, 0x40, 6, 3, 4, 1, 8, 5, 200, 5, 15, 4, 4, 4})
	f.Add([]byte{2, 0, 5, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 3, 3, 3, 3, 5, 6, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		s := fuzzScript(data)
		check(t, s)
	})
}

// fuzzScript turns data into a script on one of the scripted setups.
func fuzzScript(data []byte) *conformance.Script {
	r := conformance.NewBytes(data)
	u := []conformance.Setup{rcSetup, srqSetup, udSetup}[r.N(3)]
	if r.N(2) == 1 {
		u.Provider = dynOf(u.Provider) // the same, on dynamic UARs
	}
	c := newScripter(u)
	id := uint64(1)
	for r.Left() && len(c.s.Ops) < 64 {
		switch r.N(8) {
		case 0: // send batch
			var wrs []provider.SendWR
			for range 1 + r.N(c.sqMax+3) {
				wrs = append(wrs, fuzzSend(r, id, c))
				id++
			}
			c.send(wrs...)
		case 1: // recv or srecv batch
			var wrs []provider.RecvWR
			maxSGE := u.MaxRecvSGE
			if u.RQ == 0 {
				maxSGE = u.SRQMaxSGE
			}
			for range 1 + r.N(12) {
				wrs = append(wrs, provider.RecvWR{ID: id, SGE: r.SGEs(int(maxSGE), 2)})
				id++
			}
			if u.RQ > 0 {
				c.recv(wrs...)
			} else {
				c.srecv(wrs...)
			}
		case 2, 3: // completions
			for range r.N(5) {
				if c.cqOut() == c.cqN {
					break
				}
				fuzzCQE(r, c, u)
			}
		case 4:
			c.poll(r.N(18))
		case 5:
			c.arm(r.N(2) == 1)
		case 7: // the QP's state: RTS, then ERR or RESET, INIT, RTR, RTS again
			switch c.state {
			case abi.IB_QPS_RTS:
				if r.N(2) == 0 {
					c.modify(abi.IB_QPS_ERR)
					break
				}
				fallthrough
			case abi.IB_QPS_ERR:
				// libmlx5's cleaning of a full CQ leaves its newest
				// CQE, which a device never lets happen.
				if c.cqOut() < c.cqN {
					c.modify(abi.IB_QPS_RESET)
				}
			default:
				c.modify(c.state + 1)
			}
		case 6:
			q := []string{"sq", "cq", "rq"}[r.N(3)]
			if q == "rq" && u.RQ == 0 {
				q = "srq"
			}
			c.dump(q)
		}
	}
	// The state at the end, whatever the script did.
	c.poll(c.cqN)
	c.dump("sq")
	c.dump("cq")
	if u.RQ > 0 {
		c.dump("rq")
	} else {
		c.dump("srq")
	}
	return c.script()
}

// fuzzCQE has the device write one completion of an outstanding request,
// if there is one of the kind the fuzzer picks: a requester CQE (success
// or error) completing the send requests up to one, or a responder CQE
// (success or error) of the oldest receive or of any SRQ receive.
func fuzzCQE(r *conformance.Bytes, c *scripter, u conformance.Setup) {
	e := cqe{byteCnt: r.U32(), imm: r.U32(), flagsRQPN: r.U32(), slid: uint16(r.U32()), mlPath: r.U8(),
		syndrome: syndromes[r.N(len(syndromes))], vendor: r.U8()}
	if r.N(2) == 0 {
		if c.sqPending() == 0 {
			return
		}
		w, op := c.reqDone(r.N(c.sqPending()))
		e.wqe, e.sop, e.opcode = w, mlx5Opcode[op], cqeReq
		if r.N(4) == 0 {
			e.opcode = cqeReqErr
		}
		c.cqe(e)
		return
	}
	e.opcode = []uint8{cqeRespSend, cqeRespSendImm, cqeRespWrImm, cqeRespSendInv, cqeRespErr}[r.N(5)]
	switch {
	case u.RQ > 0 && c.rqPending() > 0:
		c.rqDone()
	case u.RQ == 0 && len(c.srqOut) > 0:
		e.wqe = c.srqDone(r.N(len(c.srqOut)))
	default:
		return
	}
	c.cqe(e)
}

// fuzzSend makes one send request both drivers take: RC opcodes (SEND
// and SEND_WITH_IMM on UD), inline data only where the opcode carries
// data and no more than libmlx5 grants, atomics with one 8-byte SGE.
func fuzzSend(r *conformance.Bytes, id uint64, c *scripter) provider.SendWR {
	u, ud := c.s.Setup, c.ud
	ops := []uint32{abi.IB_UVERBS_WR_RDMA_WRITE, abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, abi.IB_UVERBS_WR_SEND,
		abi.IB_UVERBS_WR_SEND_WITH_IMM, abi.IB_UVERBS_WR_RDMA_READ, abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP,
		abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD, abi.IB_UVERBS_WR_SEND_WITH_INV}
	if ud {
		ops = []uint32{abi.IB_UVERBS_WR_SEND, abi.IB_UVERBS_WR_SEND_WITH_IMM}
	}
	w := provider.SendWR{ID: id, Opcode: ops[r.N(len(ops))], Flags: uint32(r.N(16))}
	switch w.Opcode {
	case abi.IB_UVERBS_WR_RDMA_READ, abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		w.Flags &^= abi.IB_SEND_INLINE
	}
	switch w.Opcode {
	case abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, abi.IB_UVERBS_WR_SEND_WITH_IMM, abi.IB_UVERBS_WR_SEND_WITH_INV:
		w.Imm = r.U32()
	}
	if ud {
		w.RemoteQPN, w.RemoteQKey = r.U32()&0xffffff, r.U32()
	}
	switch w.Opcode {
	case abi.IB_UVERBS_WR_RDMA_WRITE, abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, abi.IB_UVERBS_WR_RDMA_READ:
		w.RemoteAddr, w.RKey = r.U64(), r.U32()
	case abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		w.RemoteAddr, w.RKey, w.CompareAdd, w.Swap = r.U64()&^7, r.U32(), r.U64(), r.U64()
		w.SGE = []provider.SGE{{Addr: r.U64(), Length: 8, LKey: r.U32()}}
		return w
	}
	if w.Flags&abi.IB_SEND_INLINE != 0 {
		w.SGE = r.InlineSGEs(int(c.inlineMax), 256)
		return w
	}
	w.SGE = r.SGEs(int(u.MaxSendSGE), 2)
	return w
}

package mlx5_test

import (
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/conformance"
)

// The setups of the scripted cases. libmlx5 gives the RC QP a send queue
// of 64 basic blocks that holds 10 requests (WQEs of up to 384 bytes:
// the 192 bytes a memory window bind needs, then 4 SGEs or 188 bytes of
// inline data), a receive queue of 8 WQEs of 4 SGEs; the SRQ has 32 WQEs
// of 64 bytes (3 SGEs after the next segment; the second half is its
// wait queue) and takes 15; the UD QP's WQEs are 192 bytes (control and
// datagram segments, then 4 SGEs or 124 bytes of inline data), and its
// SQ of 32 blocks holds 10 of them. The CQ has 16 entries.
var (
	rcSetup = conformance.Setup{Provider: "mlx5", SQ: 8, RQ: 8, CQ: 15,
		MaxSendSGE: 4, MaxRecvSGE: 4, MaxInline: 128}
	srqSetup = conformance.Setup{Provider: "mlx5", SQ: 8, SRQ: 8, CQ: 15,
		MaxSendSGE: 4, MaxInline: 128, SRQMaxSGE: 3}
	udSetup = conformance.Setup{Provider: "mlx5-ud", SQ: 8, RQ: 8, CQ: 15,
		MaxSendSGE: 4, MaxRecvSGE: 4, MaxInline: 64}
)

// sendCases lists one send work request for every combination of opcode
// (of an RC QP, or SEND and SEND_WITH_IMM of a UD one), the 16
// combinations of FENCE, SIGNALED, SOLICITED and INLINE where the opcode
// takes inline data, and 0 to 4 SGEs or 1 to 3 pieces of inline data
// (1 byte; 64 in two; 64 in three with an empty one; maxInline in three,
// which crosses basic blocks). Fields an opcode does not carry stay zero.
func sendCases(ud bool, maxInline uint32) []provider.SendWR {
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
		{op: abi.IB_UVERBS_WR_SEND_WITH_INV, imm: true, inline: true},
		{op: abi.IB_UVERBS_WR_RDMA_READ, rdma: true},
		{op: abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, at: true},
		{op: abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD, at: true},
	}
	if ud {
		opcodes = []opc{{op: abi.IB_UVERBS_WR_SEND, inline: true}, {op: abi.IB_UVERBS_WR_SEND_WITH_IMM, imm: true, inline: true}}
	}
	third := maxInline / 3
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
			case inline:
				sgeSets = [][]provider.SGE{
					{{Addr: 5, Length: 1}},
					{{Addr: 100, Length: 20}, {Addr: 7, Length: 44}},
					{{Addr: 0, Length: 0}, {Addr: 300, Length: 33}, {Addr: 1000, Length: 31}},
					{{Addr: 17, Length: third}, {Addr: 2000, Length: third}, {Addr: 999, Length: maxInline - 2*third}},
				}
			default:
				for n := 0; n <= 4; n++ {
					var s []provider.SGE
					for k := range n {
						s = append(s, provider.SGE{Addr: 0x10000*uint64(k+1) + id, Length: uint32(100*k) + 1 + uint32(id%7), LKey: 0x500 + uint32(k)})
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
				if ud {
					w.RemoteQPN, w.RemoteQKey = 0x100+uint32(id), 0x11110000|uint32(id)
				}
				wrs = append(wrs, w)
				id++
			}
		}
	}
	return wrs
}

// sendScript posts wrs in batches of 1 to 7 (so that single posts, which
// libmlx5 copies into the BlueFlame register whole, and batches, which
// ring the doorbell with the last control segment, both occur), dumps
// the SQ after each and completes each batch with one requester CQE
// naming its last WQE, except every fifth batch, which stays
// outstanding until the queue is full: the SQ wraps many times, at every
// offset. Then a batch larger than the queue, and one more post on the
// full queue.
func sendScript(u conformance.Setup, wrs []provider.SendWR) *scripter {
	c := newScripter(u)
	for i := 0; len(wrs) > 0; i++ {
		n := min(len(wrs), 1+i%7, c.sqMax-len(c.sqOut))
		k := c.send(wrs[:n]...)
		c.dump("sq")
		if i%5 != 4 {
			c.complete(c.sqPending() - 1)
		}
		wrs = wrs[k:]
	}
	if c.sqPending() > 0 {
		c.complete(c.sqPending() - 1)
	}
	all := sendCases(c.ud, u.MaxInline)
	c.send(all[:c.sqMax+2]...) // two do not fit
	c.send(all[:1]...)
	c.dump("sq")
	c.complete(3)
	c.send(all[5:10]...) // four fit
	c.dump("sq")
	return c
}

// complete has the device complete the outstanding send requests up to
// the k-th (as the CQE of a signaled WQE does) and polls.
func (c *scripter) complete(k int) {
	w, op := c.reqDone(k)
	e := cqe{opcode: cqeReq, sop: mlx5Opcode[op], wqe: w}
	if op == abi.IB_UVERBS_WR_RDMA_READ {
		e.byteCnt = 4096
	}
	c.cqe(e)
	c.poll(2)
}

// recvCases are 40 receives of 0 to 4 SGEs (3 and 4 with an empty one,
// which libmlx5 leaves out).
func recvCases(maxSGE int) []provider.RecvWR {
	var wrs []provider.RecvWR
	for id := uint64(1); id <= 40; id++ {
		n := int(id) % (maxSGE + 1)
		var s []provider.SGE
		for k := range n {
			l := uint32(64*k) + uint32(id)
			if k == 2 {
				l = 0
			}
			s = append(s, provider.SGE{Addr: 0x20000*uint64(k+1) + id, Length: l, LKey: 0x600 + uint32(k)})
		}
		wrs = append(wrs, provider.RecvWR{ID: id, SGE: s})
	}
	return wrs
}

// recvScript posts the receive cases on the RQ in batches of 1 to 8,
// dumps it, and has the device complete some of them (a responder CQE
// for each, of every kind), polled in twos, so that the queue wraps and
// fills: one batch is posted on a full queue.
func recvScript() *scripter {
	c := newScripter(rcSetup)
	wrs := recvCases(int(rcSetup.MaxRecvSGE))
	kinds := []uint8{cqeRespSend, cqeRespSendImm, cqeRespWrImm, cqeRespSendInv}
	for i := 0; len(wrs) > 0; i++ {
		n := min(len(wrs), 1+i%8)
		k := c.recv(wrs[:n]...)
		c.dump("rq")
		for j := range min(c.rqPending(), 1+i%5) {
			c.rqDone()
			c.cqe(cqe{opcode: kinds[(i+j)%len(kinds)], byteCnt: uint32(100 + i), imm: 0x0a0b0c00 | uint32(i),
				flagsRQPN: 0x1200 + uint32(j), slid: 0x40 + uint16(i)})
		}
		for c.cqOut() > 0 {
			c.poll(2)
		}
		wrs = wrs[k:]
	}
	c.dump("rq")
	return c
}

// srqScript posts the receive cases on the SRQ in batches of 1 to 8 and
// has the device complete them out of order, so that libmlx5's free list
// of SRQ WQEs (written into the WQEs' next segments) is reordered; the
// queue fills once.
func srqScript() *scripter {
	c := newScripter(srqSetup)
	wrs := recvCases(int(srqSetup.SRQMaxSGE))
	for i := 0; len(wrs) > 0; i++ {
		n := min(len(wrs), 1+i%8)
		k := c.srecv(wrs[:n]...)
		c.dump("srq")
		for j := range min(len(c.srqOut), i%4) {
			w := c.srqDone((i + j) % len(c.srqOut))
			c.cqe(cqe{opcode: cqeRespSend, wqe: w, byteCnt: uint32(200 + i), flagsRQPN: 0x3400 + uint32(i)})
		}
		for c.cqOut() > 0 {
			c.poll(3)
		}
		wrs = wrs[k:]
	}
	c.dump("srq")
	return c
}

// syndromes are the error syndromes libmlx5 maps to a status, and one it
// does not (IBV_WC_GENERAL_ERR).
var syndromes = []uint8{0x01, 0x02, 0x04, 0x05, 0x06, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x22, 0x77}

// cqScript runs the table of completions through a CQ of 4 entries
// (wrapping it over many passes, as its owner bit flips): a successful
// requester CQE of every opcode; responder CQEs of every kind, each with
// and without a GRH; a requester and a responder error CQE of every
// syndrome. Each names a request the script posted; they are polled one
// to four at a time, with the CQ dumped.
func cqScript() *scripter {
	u := rcSetup
	u.CQ = 3
	c := newScripter(u)
	wrs := sendCases(false, u.MaxInline)
	id := uint64(1)
	post := func(op uint32) {
		for _, w := range wrs {
			if w.Opcode == op {
				w.ID = id
				id++
				c.send(w)
				return
			}
		}
	}
	recv := func() {
		c.recv(provider.RecvWR{ID: id, SGE: []provider.SGE{{Addr: 0x9000, Length: 4096, LKey: 9}}})
		id++
	}
	var rows []func()
	for _, op := range []uint32{abi.IB_UVERBS_WR_RDMA_WRITE, abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, abi.IB_UVERBS_WR_SEND,
		abi.IB_UVERBS_WR_SEND_WITH_IMM, abi.IB_UVERBS_WR_SEND_WITH_INV, abi.IB_UVERBS_WR_RDMA_READ,
		abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD} {
		rows = append(rows, func() {
			post(op)
			w, _ := c.reqDone(0)
			c.cqe(cqe{opcode: cqeReq, sop: mlx5Opcode[op], wqe: w, byteCnt: 777})
		})
	}
	for i, kind := range []uint8{cqeRespSend, cqeRespSendImm, cqeRespWrImm, cqeRespSendInv} {
		for _, g := range []uint32{0, 1 << 28, 2 << 28, 3 << 28} {
			rows = append(rows, func() {
				recv()
				c.rqDone()
				c.cqe(cqe{opcode: kind, byteCnt: 1000 + uint32(i), imm: 0xa1b2c3d4 + uint32(i), flagsRQPN: g | 0x0a000000 | 0x4567,
					slid: 0x1234, mlPath: 0x85})
			})
		}
	}
	for i, s := range syndromes {
		rows = append(rows, func() {
			post(abi.IB_UVERBS_WR_SEND)
			w, _ := c.reqDone(0)
			c.cqe(cqe{opcode: cqeReqErr, wqe: w, syndrome: s, vendor: 0x30 + uint8(i)})
		}, func() {
			recv()
			c.rqDone()
			c.cqe(cqe{opcode: cqeRespErr, syndrome: s, vendor: 0x50 + uint8(i)})
		})
	}
	c.poll(4) // empty
	for i := 0; len(rows) > 0; i++ {
		n := min(len(rows), 1+i%4)
		for _, r := range rows[:n] {
			r()
		}
		rows = rows[n:]
		c.dump("cq")
		for c.cqOut() > 0 {
			c.poll(1 + i%3)
		}
	}
	c.poll(1) // empty again
	return c
}

// armScript arms the CQ, solicited and not, at several consumer indices,
// which the arm doorbell carries.
func armScript() *scripter {
	c := newScripter(rcSetup)
	c.arm(false)
	c.arm(true)
	for i := range 20 {
		c.recv(provider.RecvWR{ID: uint64(i), SGE: []provider.SGE{{Addr: 0x9000, Length: 64, LKey: 9}}})
		c.rqDone()
		c.cqe(cqe{opcode: cqeRespSend, byteCnt: 64})
		c.poll(1)
		c.arm(i%2 == 1)
	}
	return c
}

// localInvScript posts LOCAL_INV (a UMR WQE in libmlx5) alone and followed
// by a send, which libmlx5 fences.
func localInvScript() *scripter {
	c := newScripter(rcSetup)
	inv := provider.SendWR{ID: 1, Opcode: abi.IB_UVERBS_WR_LOCAL_INV, Flags: abi.IB_SEND_SIGNALED, Imm: 0x12345678}
	send := provider.SendWR{ID: 2, Opcode: abi.IB_UVERBS_WR_SEND, SGE: []provider.SGE{{Addr: 0x1000, Length: 10, LKey: 3}}}
	c.send(inv)
	c.send(send)
	c.send(inv, send)
	c.dump("sq")
	return c
}

// emptySGEScript posts sends with an empty SGE among others, which
// libmlx5 leaves out of the WQE.
func emptySGEScript() *scripter {
	c := newScripter(rcSetup)
	c.send(provider.SendWR{ID: 1, Opcode: abi.IB_UVERBS_WR_SEND, SGE: []provider.SGE{{Addr: 0x1000, Length: 0, LKey: 3}, {Addr: 0x2000, Length: 5, LKey: 4}}})
	c.send(provider.SendWR{ID: 2, Opcode: abi.IB_UVERBS_WR_RDMA_WRITE, RemoteAddr: 0x5000, RKey: 6,
		SGE: []provider.SGE{{Addr: 0x1000, Length: 7, LKey: 3}, {Addr: 0x2000, Length: 0, LKey: 4}}})
	c.dump("sq")
	return c
}

// inlineGrantedScript posts inline data past what the QP asked for but
// within what libmlx5 grants (the WQE's room: 188 bytes on the RC QP,
// 124 on the UD one), alone and in a batch.
func inlineGrantedScript(u conformance.Setup, granted uint32) *scripter {
	c := newScripter(u)
	w := provider.SendWR{ID: 1, Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_INLINE | abi.IB_SEND_SIGNALED,
		SGE: []provider.SGE{{Addr: 3, Length: granted - 10}, {Addr: 500, Length: 10}}}
	if c.ud {
		w.RemoteQPN, w.RemoteQKey = 0x321, 0x11112222
	}
	c.send(w)
	w.ID = 2
	c.send(w, w, w)
	c.dump("sq")
	return c
}

// resetScript posts sends and receives, has the device complete some of
// them with CQEs it does not poll (but one), and moves the QP to RESET:
// libmlx5 cleans those CQEs from the CQ (freeing an SRQ's WQEs, newest
// first) and starts the queues over. Posts in RESET are refused (the
// SRQ's, which is not the QP's, are not), in INIT only receives go in;
// after RTR and RTS the queues work again from their first WQE.
func resetScript(u conformance.Setup) *scripter {
	c := newScripter(u)
	sends := sendCases(c.ud, u.MaxInline)
	recvs := recvCases(3)
	post := func(wrs []provider.RecvWR) {
		if u.RQ > 0 {
			c.recv(wrs...)
		} else {
			c.srecv(wrs...)
		}
	}
	respond := func(k int) {
		e := cqe{opcode: cqeRespSend, byteCnt: 99}
		if u.RQ > 0 {
			c.rqDone()
		} else {
			e.wqe = c.srqDone(k)
		}
		c.cqe(e)
	}
	c.send(sends[:4]...)
	post(recvs[:5])
	w, op := c.reqDone(1)
	c.cqe(cqe{opcode: cqeReq, sop: mlx5Opcode[op], wqe: w})
	respond(2)
	respond(0)
	c.poll(1)
	c.dump("cq")
	c.modify(abi.IB_QPS_RESET)
	c.dump("cq")
	c.poll(4)
	c.send(sends[4])
	post(recvs[5:7])
	c.modify(abi.IB_QPS_INIT)
	c.send(sends[4])
	post(recvs[7:9])
	c.modify(abi.IB_QPS_RTR)
	c.modify(abi.IB_QPS_RTS)
	c.send(sends[4:7]...)
	c.dump("sq")
	if u.RQ > 0 {
		c.dump("rq")
	} else {
		c.dump("srq")
	}
	w, op = c.reqDone(2)
	c.cqe(cqe{opcode: cqeReq, sop: mlx5Opcode[op], wqe: w})
	respond(0)
	c.poll(4)
	return c
}

// confScript is a scripted case; skip, when not empty, says why the Go
// driver does not run it yet.
type confScript struct {
	name string
	s    *conformance.Script
	skip string
}

// confScripts is the table of scripted cases: each on the static UARs
// of its setup, then again (Dyn...) on dynamic UARs.
func confScripts() []confScript {
	cases := staticScripts()
	for _, c := range staticScripts() {
		c.name = "Dyn" + c.name
		c.s.Provider = dynOf(c.s.Provider)
		cases = append(cases, c)
	}
	return cases
}

// dynOf returns the dynamic UAR variant of a setup's provider word.
func dynOf(p string) string { return strings.Replace(p, "mlx5", "mlx5dyn", 1) }

// staticScripts is the table of scripted cases on the static setups.
func staticScripts() []confScript {
	return []confScript{
		{name: "Send", s: sendScript(rcSetup, sendCases(false, rcSetup.MaxInline)).script()},
		{name: "UDSend", s: sendScript(udSetup, sendCases(true, udSetup.MaxInline)).script()},
		{name: "Recv", s: recvScript().script()},
		{name: "SRQRecv", s: srqScript().script()},
		{name: "CQ", s: cqScript().script()},
		{name: "Arm", s: armScript().script()},
		{name: "LocalInv", s: localInvScript().script(),
			skip: "the Go driver refuses LOCAL_INV (ErrUnsupported: no UMR WQEs); libmlx5 posts a 128-byte UMR WQE"},
		{name: "EmptySGE", s: emptySGEScript().script()},
		{name: "InlineGranted", s: inlineGrantedScript(rcSetup, 188).script()},
		{name: "Reset", s: resetScript(rcSetup).script()},
		{name: "SRQReset", s: resetScript(srqSetup).script()},
		{name: "UDReset", s: resetScript(udSetup).script()},
		{name: "UDInlineGranted", s: inlineGrantedScript(udSetup, 124).script()},
	}
}

func TestConformance(t *testing.T) {
	for _, c := range confScripts() {
		t.Run(c.name, func(t *testing.T) {
			if c.skip != "" {
				t.Skip(c.skip)
			}
			n := map[string]int{}
			for _, op := range c.s.Ops {
				n[op.Kind] += max(1, len(op.Send)+len(op.Recv))
			}
			t.Logf("%d operations: %v", len(c.s.Ops), n)
			check(t, c.s)
		})
	}
}

// TestConformanceNamesField is the comparison's own check: one byte of
// one Go slot changed (what a one-byte slip in Put would write) must make
// exactly one difference, naming the slot and the field. The byte is in
// the remote address of the first request, an RDMA write.
func TestConformanceNamesField(t *testing.T) {
	h := conformance.HarnessMLX5(t)
	s := sendScript(rcSetup, sendCases(false, rcSetup.MaxInline)).script()
	cLines := conformance.RunC(t, h, s)
	goLines := newGoSide(t, s.Setup).Run(t, s)
	for i, l := range goLines {
		if strings.HasPrefix(l, "slot sq 0 ") {
			// Byte 21 of the WQE is the second byte of the low word
			// of the big-endian remote address (0xdead0000 + 64*1000
			// = 0xdeadfa00, so 0xad).
			b := []byte(l)
			at := len("slot sq 0 ") + 2*21
			if string(b[at:at+2]) != "ad" {
				t.Fatalf("byte 21 of the first WQE is %s, want ad", b[at:at+2])
			}
			b[at+1] = 'c'
			goLines[i] = string(b)
			break
		}
	}
	diffs := conformance.DiffLines("mlx5", goLines, cLines, newNamer(cLines, false), nil)
	want := "mlx5 after op 0 (send): sq slot 0: raddr.raddr at offset 16: Go 0xdeacfa00 C 0xdeadfa00"
	if len(diffs) != 1 || diffs[0] != want {
		t.Errorf("differences %q, want [%q]", diffs, want)
	}
}

package rxe

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/conformance"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// The conformance tests run scripts through rdma-core's librxe (the C
// harness, see package conformance) and through this package over the
// same fake rings, and compare the transcripts: every slot the kernel can
// see, byte for byte, the indices, how many requests each post took and
// the doorbells it rang, and the work completions polled.

// rxeSlotLog2 is the log2 of the slot size the kernel picks for a queue
// whose elements are hdr bytes and data bytes of SGEs or inline data:
// rounded up to a power of two (the harness computes the same).
func rxeSlotLog2(hdr, data uint32) uint32 {
	l := uint32(0)
	for 1<<l < hdr+data {
		l++
	}
	return l
}

// goSide is the Go provider over Go-owned rings, playing the kernel's
// part the way the harness's fake kernel does.
type goSide struct {
	conformance.Player
	dev  *fakeDev
	bufs map[string][]byte
}

// udAHNum is the address handle number the harness's fake kernel gives
// (rxe_create_ah_resp.ah_num); uverbs passes the AH NewAH made of it in
// SendWR.AH.
const udAHNum = 0x33

var udAH = provider.AH{Num: udAHNum}

func newGoSide(t testing.TB, u conformance.Setup) *goSide {
	t.Helper()
	g := &goSide{bufs: map[string][]byte{}}
	sqLog2 := rxeSlotLog2(sendWQEHdr, max(u.MaxSendSGE*sgeSize, u.MaxInline))
	g.bufs["sq"] = ring(sqLog2, u.SQ, 0, 0)
	maps := map[uint64][]byte{3 << 12: g.bufs["sq"]}
	var rqMI abi.MMInfo
	if u.RQ > 0 {
		g.bufs["rq"] = ring(rxeSlotLog2(recvWQEHdr, u.MaxRecvSGE*sgeSize), u.RQ, 0, 0)
		maps[2<<12] = g.bufs["rq"]
		rqMI = mi(2<<12, g.bufs["rq"])
	}
	if u.SRQ > 0 {
		g.bufs["srq"] = ring(rxeSlotLog2(recvWQEHdr, u.SRQMaxSGE*sgeSize), u.SRQ, 0, 0)
		maps[4<<12] = g.bufs["srq"]
	}
	g.bufs["cq"] = ring(rxeSlotLog2(wcSize, 0), u.CQ, 0, 0)
	maps[1<<12] = g.bufs["cq"]
	g.dev = &fakeDev{maps: maps}

	var err error
	g.CQ, err = createCQ(g.dev, encode(t, abi.RxeCreateCQResp{MI: mi(1<<12, g.bufs["cq"])}))
	if err != nil {
		t.Fatal(err)
	}
	if u.SRQ > 0 {
		g.SRQ, err = createSRQ(g.dev, provider.SRQInit{MaxWR: u.SRQ - 1, MaxSGE: u.SRQMaxSGE},
			encode(t, abi.RxeCreateSRQResp{MI: mi(4<<12, g.bufs["srq"]), SRQNum: 0x21}))
		if err != nil {
			t.Fatal(err)
		}
	}
	typ := uint8(abi.IB_UVERBS_QPT_RC)
	if u.Provider == "rxe-ud" {
		typ = abi.IB_UVERBS_QPT_UD
	}
	if typ == abi.IB_UVERBS_QPT_UD {
		g.PrepSend = func(w *provider.SendWR) { w.AH = &udAH }
	}
	init := provider.QPInit{Handle: 7, QPNum: 0x11, Type: typ,
		MaxSendWR: u.SQ - 1, MaxSendSGE: u.MaxSendSGE, MaxInline: u.MaxInline, SRQ: u.RQ == 0}
	if u.RQ > 0 {
		init.MaxRecvWR, init.MaxRecvSGE = u.RQ-1, u.MaxRecvSGE
	}
	g.SQ, g.RQ, err = createQP(g.dev, init,
		encode(t, abi.RxeCreateQPResp{RQMI: rqMI, SQMI: mi(3<<12, g.bufs["sq"])}))
	if err != nil {
		t.Fatal(err)
	}
	g.Doorbell = func() int { return g.dev.doorbells }
	g.Consume, g.CQE, g.Dump = g.consume, g.cqe, g.dump
	g.Out = append(g.Out, "ready")
	return g
}

func encode(t testing.TB, v any) []byte {
	t.Helper()
	b, err := binary.Append(nil, binary.NativeEndian, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// consume is the fake kernel taking n slots of queue q: it zeroes them
// and moves the consumer index on.
func (g *goSide) consume(q string, n uint32) {
	b := g.bufs[q]
	for range n {
		c := consumer(b)
		clear(slotOf(b, int(c)))
		mem.Uint32(b, offConsumer).Store((c + 1) & (uint32(len(b)-queueHdr)>>log2Of(b) - 1))
	}
}

// dump prints queue q's indices and every slot.
func (g *goSide) dump(q string) []string {
	b := g.bufs[q]
	out := []string{fmt.Sprintf("index %s %d %d", q, producer(b), consumer(b))}
	for i := range int(binary.NativeEndian.Uint32(b[offMask:])) + 1 {
		out = append(out, conformance.Slot(q, i, slotOf(b, i)))
	}
	return out
}

func log2Of(b []byte) uint32 { return binary.NativeEndian.Uint32(b[offElemLog:]) }

// cqe writes an ib_uverbs_wc at the CQ's producer index and publishes it,
// as the harness's fake kernel does. The fields are those of the cqe
// command: wr_id status opcode vendor_err byte_len ex(raw) qp_num src_qp
// wc_flags pkey_index slid sl dlid_path_bits port_num.
func (g *goSide) cqe(t testing.TB, f []uint64) {
	t.Helper()
	if len(f) != 14 {
		t.Fatalf("cqe with %d fields", len(f))
	}
	b := g.bufs["cq"]
	p := producer(b)
	s := slotOf(b, int(p))
	clear(s)
	*mem.At[abi.WC](s, 0) = abi.WC{WrID: f[0], Status: uint32(f[1]), Opcode: uint32(f[2]), VendorErr: uint32(f[3]),
		ByteLen: uint32(f[4]), Ex: uint32(f[5]), QPNum: uint32(f[6]), SrcQP: uint32(f[7]), WCFlags: uint32(f[8]),
		PKeyIndex: uint16(f[9]), SLID: uint16(f[10]), SL: uint8(f[11]), DLIDPathBits: uint8(f[12]), PortNum: uint8(f[13])}
	mem.Uint32(b, offProducer).Store((p + 1) & binary.NativeEndian.Uint32(b[offMask:]))
}

// Field tables of the queue elements, for naming a differing byte.
var (
	sendHdrFields = conformance.Fields(abi.RxeSendWQE{}, 0, "")
	recvHdrFields = conformance.Fields(abi.RxeRecvWQE{}, 0, "")
	unionOff      = 24 // offsetof(struct rxe_send_wr, wr)
	rdmaFields    = conformance.Fields(abi.RxeSendWrRDMA{}, unionOff, "Wr.Wr.rdma")
	atomicFields  = conformance.Fields(abi.RxeSendWrAtomic{}, unionOff, "Wr.Wr.atomic")
)

// nameField names byte off of a slot of queue q, from the C side's bytes:
// the send WQE's union by its opcode, what follows the header as SGEs or
// inline data by its flags.
func nameField(q string, slot []byte, off int) string {
	switch q {
	case "sq":
		op := binary.NativeEndian.Uint32(slot[12:])
		if off >= unionOff && off < unionOff+120 {
			switch op {
			case abi.IB_UVERBS_WR_RDMA_WRITE, abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, abi.IB_UVERBS_WR_RDMA_READ:
				return conformance.Name(rdmaFields, off)
			case abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
				return conformance.Name(atomicFields, off)
			}
			return fmt.Sprintf("Wr.Wr[%d]", off-unionOff)
		}
		if off < sendWQEHdr {
			return conformance.Name(sendHdrFields, off)
		}
		if binary.NativeEndian.Uint32(slot[16:])&abi.IB_SEND_INLINE != 0 {
			return fmt.Sprintf("inline_data[%d]", off-sendWQEHdr)
		}
		return sgeName(off - sendWQEHdr)
	case "rq", "srq":
		if off < recvWQEHdr {
			return conformance.Name(recvHdrFields, off)
		}
		return sgeName(off - recvWQEHdr)
	case "cq":
		return conformance.Name(conformance.Fields(abi.WC{}, 0, ""), off)
	}
	return "?"
}

func sgeName(off int) string {
	i := off / sgeSize
	return fmt.Sprintf("sge[%d].%s", i, conformance.Name(conformance.Fields(abi.RxeSGE{}, 0, ""), off%sgeSize))
}

// published rewrites the slot records of both transcripts' work queues
// (the CQ's slots are the fake kernel's, compared whole) that lie outside
// the published window [consumer, producer) of their queue to a marker:
// the kernel never reads them. The Go side's must be zero there (Go writes
// a slot only to publish it, and consume zeroes what it takes); the C
// side's are not compared: rdma-core's post_one_send writes a request
// into the producer's slot before it finds the ring full, and leaves it
// there (docs/conformance.md).
func published(t testing.TB, goLines, cLines []string) {
	t.Helper()
	var prod, cons, mask uint32
	q := ""
	for i := range goLines {
		f := strings.Fields(goLines[i])
		switch {
		case len(f) == 4 && f[0] == "index":
			q = f[1]
			fmt.Sscan(f[2], &prod)
			fmt.Sscan(f[3], &cons)
			mask = uint32(len(bufSlots(goLines[i+1:], q))) - 1
		case len(f) == 4 && f[0] == "slot" && f[1] == q && q != "cq":
			var idx uint32
			fmt.Sscan(f[2], &idx)
			if (idx-cons)&mask < (prod-cons)&mask {
				continue
			}
			if strings.Trim(f[3], "0") != "" {
				t.Errorf("Go wrote unpublished %s slot %d: %s", q, idx, f[3])
			}
			goLines[i] = "slot " + q + " " + f[2] + " unpublished"
			if i < len(cLines) && strings.HasPrefix(cLines[i], "slot "+q+" "+f[2]+" ") {
				cLines[i] = goLines[i]
			}
		}
	}
}

// bufSlots returns the slot records of queue q at the start of lines.
func bufSlots(lines []string, q string) []string {
	n := 0
	for n < len(lines) && strings.HasPrefix(lines[n], "slot "+q+" ") {
		n++
	}
	return lines[:n]
}

// check runs s on both sides and reports every difference.
func check(t *testing.T, harness string, s *conformance.Script) {
	t.Helper()
	cLines := conformance.RunC(t, harness, s)
	goLines := newGoSide(t, s.Setup).Run(t, s)
	published(t, goLines, cLines)
	knownDoorbells(goLines, cLines)
	var ignore func(q, field string) bool
	if s.Provider == "rxe-ud" {
		ignore = udIova
	}
	conformance.Report(t, conformance.Diff("rxe", goLines, cLines, nameField, ignore))
}

// udIova excuses iova in UD send WQEs: librxe's init_send_wqe copies
// wr.rdma.remote_addr into it for every non-atomic opcode, and in a UD
// send that word of the ibv_send_wr union is wr.ud.ah, the address
// handle's pointer. We leave it 0; the kernel reads iova only for RDMA
// and atomics (docs/conformance.md).
func udIova(q, field string) bool { return q == "sq" && field == "Iova" }

// knownDoorbells excuses rdma-core's doorbell for a send post that posted
// nothing: rxe_post_send rings after every call, purerdma only when a
// request went into the ring (docs/conformance.md).
func knownDoorbells(goLines, cLines []string) {
	for i := range min(len(goLines), len(cLines)) {
		g, c := strings.Fields(goLines[i]), strings.Fields(cLines[i])
		if len(g) == 7 && len(c) == 7 && g[0] == "op" && g[2] == "send" && g[4] == "0" && c[4] == "0" &&
			g[6] == "0" && c[6] == "1" {
			cLines[i] = goLines[i]
		}
	}
}

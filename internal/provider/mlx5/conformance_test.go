package mlx5_test

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/conformance"
	"github.com/purerdma/purerdma/internal/provider/mem"
	"github.com/purerdma/purerdma/internal/provider/mlx5"
	_ "github.com/purerdma/purerdma/internal/provider/mlx5" // registers the driver
)

// The conformance tests run scripts through rdma-core's libmlx5 (the C
// harness test/conformance/mlx5.c, see package conformance) and through
// this package's driver, found by its driver id and driven only through
// provider.Driver and provider.Context as uverbs drives it, over the same
// fake kernel and device, and compare the transcripts: the driver
// requests of the create commands, the UAR pages mapped, every WQE, the
// doorbell records and the stores into the UAR pages after every
// operation, and the work completions polled from the CQEs the script
// has the device write.

// confAH is the address handle of the UD scripts, the C harness's ud_ah:
// an InfiniBand port (no CREATE_AH in libmlx5), with a GRH.
var confAH = provider.AHAttr{
	DGID:         [16]byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55},
	FlowLabel:    0x12345,
	SGIDIndex:    2,
	HopLimit:     64,
	TrafficClass: 0x22,
	DLID:         0x1234,
	SL:           5,
	SrcPathBits:  0x11,
	StaticRate:   3, // IBV_RATE_10_GBPS
	IsGlobal:     true,
	PortNum:      1,
}

// goSide is the Go driver over the Go fake kernel and device, playing the
// script as the harness does.
type goSide struct {
	conformance.Player
	dev *fakeDevice
	ah  provider.AH
	cq  struct {
		buf, db []byte
		n, put  uint32
	}
	srq struct {
		buf, db   []byte
		n, stride uint32
	}
	qp struct {
		buf, sq, db          []byte
		sqBBs, rqN, rqStride uint32
	}
	hasQP bool
}

// at returns n bytes at address a of the driver's memory, as the device
// reads it through a DMA address.
func at(a uint64, n int) []byte { return mem.User(a, n) }

func le32(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
func le64(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }

// newGoSide opens a context of the mlx5 driver and creates the script's
// CQ, address handle, SRQ and QP, answering each command as the C
// harness's fake kernel does, and records what the harness records.
func newGoSide(t testing.TB, u conformance.Setup) *goSide {
	t.Helper()
	d := mlx5.Driver()
	g := &goSide{dev: &fakeDevice{}}
	ud, dyn := isUD(u.Provider), isDyn(u.Provider)
	var closers []func() error
	t.Cleanup(func() {
		for i := len(closers) - 1; i >= 0; i-- {
			if err := closers[i](); err != nil {
				t.Error(err)
			}
		}
		g.dev.close(t)
	})
	var setup []string
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	ctx, err := d.NewContext(g.dev)
	must("NewContext", err)
	in, out := ctx.Udata(abi.IB_USER_VERBS_CMD_GET_CONTEXT)
	req := make([]byte, in)
	ctx.Start(req)
	if in >= 12 && le32(req, 8)&allocUctxDEVX != 0 {
		// The kernel refuses DEVX without CAP_NET_RAW (EPERM); uverbs
		// does not retry.
		t.Errorf("GET_CONTEXT asks for DEVX, which the kernel refuses to a process without CAP_NET_RAW")
	}
	setup = append(setup, "cmd context "+hex.EncodeToString(req))
	must("Opened", ctx.Opened(contextResp(out, dyn)))
	closers = append(closers, ctx.Close)
	setup = append(setup, g.dev.flush()...)

	cqInit := provider.CQInit{CQE: u.CQ}
	in, out = ctx.Udata(abi.IB_USER_VERBS_CMD_CREATE_CQ)
	req = make([]byte, in)
	pcq, err := ctx.CreateCQ(&cqInit, req)
	must("CreateCQ", err)
	setup = append(setup, fmt.Sprintf("cap cq %d", cqInit.CQE), "cmd cq "+hex.EncodeToString(pageOffsets(req, 0, 8)))
	if in < 16 {
		t.Fatalf("CREATE_CQ: driver request of %d bytes", in)
	}
	g.cq.n = cqInit.CQE + 1
	if g.cq.n&(g.cq.n-1) != 0 {
		t.Fatalf("CREATE_CQ asks for %d entries, not a power of two", g.cq.n)
	}
	g.cq.buf = at(le64(req, 0), int(g.cq.n)*cqeSize)
	g.cq.db = at(le64(req, 8), 8)
	cqInit.Handle, cqInit.Granted = confCQHandle, cqInit.CQE
	cq, err := pcq.Finish(objResp(out, confCQN))
	must("CQ Finish", err)
	closers = append(closers, cq.Close)
	g.CQ = cq

	if ud {
		_, out = ctx.Udata(abi.IB_USER_VERBS_CMD_CREATE_AH)
		g.ah, err = ctx.NewAH(&confAH, make([]byte, out))
		must("NewAH", err)
		g.PrepSend = func(w *provider.SendWR) { w.AH = &g.ah }
	}

	var srq provider.RQ
	if u.SRQ > 0 {
		srqInit := provider.SRQInit{MaxWR: u.SRQ, MaxSGE: u.SRQMaxSGE}
		in, out = ctx.Udata(abi.IB_USER_VERBS_CMD_CREATE_SRQ)
		req = make([]byte, in)
		psrq, err := ctx.CreateSRQ(&srqInit, req)
		must("CreateSRQ", err)
		setup = append(setup, fmt.Sprintf("cap srq %d %d", srqInit.MaxWR, srqInit.MaxSGE),
			"cmd srq "+hex.EncodeToString(pageOffsets(req, 0, 8)))
		if in < 16 {
			t.Fatalf("CREATE_SRQ: driver request of %d bytes", in)
		}
		// The kernel sizes the SRQ from the generic request (see the
		// harness).
		g.srq.n = pow2(srqInit.MaxWR + 1)
		g.srq.stride = pow2(max(32, 16+16*srqInit.MaxSGE))
		g.srq.buf = at(le64(req, 0), int(g.srq.n*g.srq.stride))
		g.srq.db = at(le64(req, 8), 4)
		srqInit.Handle = confSRQHandle
		srq, err = psrq.Finish(objResp(out, confSRQN))
		must("SRQ Finish", err)
		closers = append(closers, srq.Close)
		g.SRQ = srq
	}

	qpInit := provider.QPInit{Type: abi.IB_UVERBS_QPT_RC, MaxSendWR: u.SQ, MaxRecvWR: u.RQ,
		MaxSendSGE: u.MaxSendSGE, MaxRecvSGE: u.MaxRecvSGE, MaxInline: u.MaxInline,
		SendCQ: cq, RecvCQ: cq}
	if ud {
		qpInit.Type = abi.IB_UVERBS_QPT_UD
	}
	if u.RQ == 0 && srq != nil {
		qpInit.SRQ, qpInit.SRQQueue = true, srq
	}
	in, out = ctx.Udata(abi.IB_USER_VERBS_CMD_CREATE_QP)
	req = make([]byte, in)
	pqp, err := ctx.CreateQP(&qpInit, req)
	must("CreateQP", err)
	setup = append(setup, g.dev.flush()...)
	setup = append(setup, fmt.Sprintf("cap qp %d %d %d %d %d", qpInit.MaxSendWR, qpInit.MaxRecvWR,
		qpInit.MaxSendSGE, qpInit.MaxRecvSGE, qpInit.MaxInline), "cmd qp "+hex.EncodeToString(pageOffsets(req, 0, 8, 40)))
	if in < 28 {
		t.Fatalf("CREATE_QP: driver request of %d bytes", in)
	}
	g.qp.sqBBs, g.qp.rqN = le32(req, 16), le32(req, 20)
	if g.qp.rqN > 0 {
		g.qp.rqStride = 1 << le32(req, 24)
	}
	rqBytes := int(g.qp.rqN * g.qp.rqStride)
	g.qp.buf = at(le64(req, 0), rqBytes+int(g.qp.sqBBs)*sendWQEBB)
	g.qp.sq = g.qp.buf[rqBytes:]
	g.qp.db = at(le64(req, 8), 8)
	g.hasQP = true
	qpInit.Handle, qpInit.QPNum = confQPHandle, confQPN
	bfreg := uint32(confQPBFReg)
	if dyn {
		bfreg = invalidBFReg
	}
	queues, err := pqp.Finish(objResp(out, bfreg))
	must("QP Finish", err)
	closers = append(closers, queues.SQ.Close)
	if queues.RQ != nil {
		closers = append(closers, queues.RQ.Close)
	}
	g.SQ, g.RQ = queues.SQ, queues.RQ

	for _, p := range g.dev.sorted() {
		setup = append(setup, fmt.Sprintf("mmap 0x%x %d", p.off, len(p.b)))
	}
	// MODIFY_QP: uverbs tells the driver of a new state through an
	// optional method of the send queue (mlx5_modify_qp's work after
	// the command); the harness moved the QP to RTS.
	modified, ok := g.SQ.(interface{ Modified(state uint32) })
	if !ok {
		t.Fatal("the mlx5 send queue has no Modified(state uint32)")
	}
	for _, st := range []uint32{abi.IB_QPS_INIT, abi.IB_QPS_RTR, abi.IB_QPS_RTS} {
		modified.Modified(st)
	}
	g.Modify = modified.Modified
	g.CQEBytes, g.Dump, g.After = g.cqe, g.dump, g.view
	g.Out = append(append([]string{"ready"}, setup...), g.view()...)
	return g
}

// isUD reports whether a setup line's provider word names a UD QP
// (mlx5-ud, mlx5dyn-ud).
func isUD(p string) bool { return strings.HasSuffix(p, "-ud") }

// isDyn reports whether it names the dynamic UAR variant (mlx5dyn,
// mlx5dyn-ud): a kernel that hands out no static UARs at GET_CONTEXT.
func isDyn(p string) bool { return strings.HasPrefix(p, "mlx5dyn") }

// cqe is the device writing b into its next CQ entry: op_own last, with
// the owner bit of its pass over the ring.
func (g *goSide) cqe(t testing.TB, b []byte) {
	t.Helper()
	if len(b) != cqeSize {
		t.Fatalf("cqe of %d bytes", len(b))
	}
	e := g.cq.buf[(g.cq.put&(g.cq.n-1))*cqeSize:][:cqeSize]
	copy(e[:cqeSize-1], b)
	e[cqeSize-1] = b[cqeSize-1]&^1 | byte(g.cq.put/g.cq.n&1)
	g.cq.put++
}

// dump prints queue q's slots as the harness does.
func (g *goSide) dump(q string) []string {
	var out []string
	switch q {
	case "sq":
		for i := range int(g.qp.sqBBs) {
			out = append(out, conformance.Slot(q, i, g.qp.sq[i*sendWQEBB:][:sendWQEBB]))
		}
	case "rq":
		s := int(g.qp.rqStride)
		for i := range int(g.qp.rqN) {
			out = append(out, conformance.Slot(q, i, g.qp.buf[i*s:][:s]))
		}
	case "srq":
		s := int(g.srq.stride)
		for i := range int(g.srq.n) {
			out = append(out, conformance.Slot(q, i, g.srq.buf[i*s:][:s]))
		}
	case "cq":
		for i := range int(g.cq.n) {
			out = append(out, conformance.Slot(q, i, g.cq.buf[i*cqeSize:][:cqeSize]))
		}
	}
	return out
}

// view is the device's view after an operation: the doorbell records as
// big-endian words, and the non-zero words of the UAR pages, which it
// then clears. A doorbell rung through the kernel (which libmlx5 never
// does) shows as a record of its own.
func (g *goSide) view() []string {
	var out []string
	be := binary.BigEndian
	if g.hasQP {
		out = append(out, fmt.Sprintf("dbr qp.rq 0x%x", be.Uint32(g.qp.db[0:])), fmt.Sprintf("dbr qp.sq 0x%x", be.Uint32(g.qp.db[4:])))
	}
	if g.srq.db != nil {
		out = append(out, fmt.Sprintf("dbr srq 0x%x", be.Uint32(g.srq.db)))
	}
	out = append(out, fmt.Sprintf("dbr cq.ci 0x%x", be.Uint32(g.cq.db[0:])), fmt.Sprintf("dbr cq.arm 0x%x", be.Uint32(g.cq.db[4:])))
	for _, p := range g.dev.sorted() {
		for off := 0; off+8 <= len(p.b); off += 8 {
			if w := p.b[off : off+8]; binary.LittleEndian.Uint64(w) != 0 {
				out = append(out, fmt.Sprintf("uar 0x%x %x", p.off+uint64(off), w))
			}
		}
		clear(p.b)
	}
	if g.dev.doorbells > 0 {
		out = append(out, fmt.Sprintf("kernel doorbell %d", g.dev.doorbells))
		g.dev.doorbells = 0
	}
	return out
}

// check runs s through the C harness and the Go driver and reports every
// difference.
func check(t *testing.T, s *conformance.Script) {
	t.Helper()
	h := conformance.HarnessMLX5(t)
	cLines := conformance.RunC(t, h, s)
	if isDyn(s.Provider) && !slices.ContainsFunc(cLines, func(l string) bool { return strings.HasPrefix(l, "uaralloc ") }) {
		// libmlx5 took the static path: the variant compares nothing new.
		t.Fatal("mlx5dyn: libmlx5 allocated no UAR object")
	}
	goLines := newGoSide(t, s.Setup).Run(t, s)
	conformance.Report(t, conformance.DiffLines("mlx5", goLines, cLines, newNamer(cLines, isUD(s.Provider)), nil))
}

// Field tables of the driver requests (little-endian, struct
// mlx5_ib_alloc_ucontext_req_v2, mlx5_ib_create_cq, mlx5_ib_create_srq,
// mlx5_ib_create_qp) and of the device's structures (big-endian, "/be":
// the WQE segments and the CQE of mlx5dv.h).
var (
	ctxReqFields = []conformance.Field{fl(0, 4, "total_num_bfregs"), fl(4, 4, "num_low_latency_bfregs"),
		fl(8, 4, "flags"), fl(12, 4, "comp_mask"), fl(16, 1, "max_cqe_version"), fl(17, 1, "reserved0"),
		fl(18, 2, "reserved1"), fl(20, 4, "reserved2"), fl(24, 8, "lib_caps")}
	cqReqFields = []conformance.Field{fl(0, 8, "buf_addr"), fl(8, 8, "db_addr"), fl(16, 4, "cqe_size"),
		fl(20, 1, "cqe_comp_en"), fl(21, 1, "cqe_comp_res_format"), fl(22, 2, "flags"), fl(24, 2, "uar_page_index"),
		fl(26, 2, "reserved0"), fl(28, 4, "reserved1")}
	srqReqFields = []conformance.Field{fl(0, 8, "buf_addr"), fl(8, 8, "db_addr"), fl(16, 4, "flags"),
		fl(20, 4, "reserved0"), fl(24, 4, "uidx"), fl(28, 4, "reserved1")}
	qpReqFields = []conformance.Field{fl(0, 8, "buf_addr"), fl(8, 8, "db_addr"), fl(16, 4, "sq_wqe_count"),
		fl(20, 4, "rq_wqe_count"), fl(24, 4, "rq_wqe_shift"), fl(28, 4, "flags"), fl(32, 4, "uidx"),
		fl(36, 4, "bfreg_index"), fl(40, 8, "sq_buf_addr"), fl(48, 4, "ece_options"),
		fl(52, 1, "dci_streams.log_num_concurent"), fl(53, 1, "dci_streams.log_num_errored"), fl(54, 2, "reserved")}

	ctrlFields = []conformance.Field{fl(0, 4, "ctrl.opmod_idx_opcode/be"), fl(4, 4, "ctrl.qpn_ds/be"),
		fl(8, 1, "ctrl.signature"), fl(9, 2, "ctrl.dci_stream_channel_id/be"), fl(11, 1, "ctrl.fm_ce_se"),
		fl(12, 4, "ctrl.imm/be")}
	avFields = []conformance.Field{fl(0, 4, "av.qkey/be"), fl(4, 4, "av.reserved/be"), fl(8, 4, "av.dqp_dct/be"),
		fl(12, 1, "av.stat_rate_sl"), fl(13, 1, "av.fl_mlid"), fl(14, 2, "av.rlid/be"), fl(16, 4, "av.reserved0"),
		fl(20, 6, "av.rmac"), fl(26, 1, "av.tclass"), fl(27, 1, "av.hop_limit"), fl(28, 4, "av.grh_gid_fl/be"),
		fl(32, 16, "av.rgid")}
	raddrFields  = []conformance.Field{fl(0, 8, "raddr.raddr/be"), fl(8, 4, "raddr.rkey/be"), fl(12, 4, "raddr.reserved/be")}
	atomicFields = []conformance.Field{fl(0, 8, "atomic.swap_add/be"), fl(8, 8, "atomic.compare/be")}
	dataFields   = []conformance.Field{fl(0, 4, "byte_count/be"), fl(4, 4, "lkey/be"), fl(8, 8, "addr/be")}
	nextFields   = []conformance.Field{fl(0, 2, "next.rsvd0"), fl(2, 2, "next.next_wqe_index/be"),
		fl(4, 1, "next.signature"), fl(5, 11, "next.rsvd1")}
	cqeFields = []conformance.Field{fl(0, 2, "rsvd0"), fl(2, 2, "wqe_id/be"), fl(4, 13, "rsvd4"), fl(17, 1, "ml_path"),
		fl(18, 4, "rsvd20"), fl(22, 2, "slid/be"), fl(24, 4, "flags_rqpn/be"), fl(28, 1, "hds_ip_ext"),
		fl(29, 1, "l4_hdr_type_etc"), fl(30, 2, "vlan_info/be"), fl(32, 4, "srqn_uidx/be"),
		fl(36, 4, "imm_inval_pkey/be"), fl(40, 1, "app"), fl(41, 1, "app_op"), fl(42, 2, "app_info/be"),
		fl(44, 4, "byte_cnt/be"), fl(48, 8, "timestamp/be"), fl(56, 4, "sop_drop_qpn/be"),
		fl(60, 2, "wqe_counter/be"), fl(62, 1, "signature"), fl(63, 1, "op_own")}
)

// fl is one row of a field table.
func fl(off, size int, name string) conformance.Field {
	return conformance.Field{Off: off, Size: size, Name: name}
}

// The mlx5 opcodes whose WQEs carry segments after the control segment.
const (
	opRDMAWrite    = 0x08
	opRDMAWriteImm = 0x09
	opRDMARead     = 0x10
	opAtomicCS     = 0x11
	opAtomicFA     = 0x12
	opUMR          = 0x25 // LOCAL_INV, BIND_MW
	inlineSeg      = 0x80000000
)

// newNamer names the bytes of the C side's slots and driver requests.
// An SQ basic block is named within the WQE it belongs to, which the
// namer finds by following the producer through the transcript (the
// qp.sq doorbell record) and the WQEs' sizes (their control segments'
// ds): see sqWQEs.
func newNamer(cLines []string, ud bool) conformance.LineNamer {
	wqes := sqWQEs(cLines)
	return func(line int, q string, slot []byte, off int) string {
		switch q {
		case "cmd context":
			return conformance.Name(ctxReqFields, off)
		case "cmd cq":
			return conformance.Name(cqReqFields, off)
		case "cmd srq":
			return conformance.Name(srqReqFields, off)
		case "cmd qp":
			return conformance.Name(qpReqFields, off)
		case "sq":
			w, ok := wqes[line]
			if !ok {
				return fmt.Sprintf("unposted[%d]", off)
			}
			n := nameWQE(w.wqe, w.at+off, ud)
			if w.at > 0 {
				n = fmt.Sprintf("WQE at %d: %s", w.start, n)
			}
			return n
		case "rq":
			return dataName(off)
		case "srq":
			if off < 16 {
				return conformance.Name(nextFields, off)
			}
			return dataName(off - 16)
		case "cq":
			return conformance.Name(cqeFields, off)
		}
		return "?"
	}
}

func dataName(off int) string {
	return fmt.Sprintf("data[%d].%s", off/16, conformance.Name(dataFields, off%16))
}

// nameWQE names byte o of the send WQE w: the control segment, then the
// datagram segment (UD) or the remote address and atomic segments (by
// the opcode), then inline data or data segments.
func nameWQE(w []byte, o int, ud bool) string {
	if o < 16 {
		return conformance.Name(ctrlFields, o)
	}
	pos := 16
	if ud {
		if o < pos+48 {
			return conformance.Name(avFields, o-pos)
		}
		pos += 48
	} else {
		switch w[3] {
		case opRDMAWrite, opRDMAWriteImm, opRDMARead:
			if o < pos+16 {
				return conformance.Name(raddrFields, o-pos)
			}
			pos += 16
		case opAtomicCS, opAtomicFA:
			if o < pos+16 {
				return conformance.Name(raddrFields, o-pos)
			}
			if o < pos+32 {
				return conformance.Name(atomicFields, o-pos-16)
			}
			pos += 32
		case opUMR:
			return fmt.Sprintf("umr.word%d/be", (o-pos)/4)
		}
	}
	if pos+4 <= len(w) && binary.BigEndian.Uint32(w[pos:])&inlineSeg != 0 {
		if o < pos+4 {
			return "inline.byte_count/be"
		}
		d := (o - pos - 4) / 16 * 16
		return fmt.Sprintf("inline.data[%d:%d]", d, d+16)
	}
	return dataName(o - pos)
}

// wqeAt is the WQE a basic block of a dump belongs to: its bytes (from
// the dump), the block's offset in it and the WQE's first block.
type wqeAt struct {
	wqe   []byte
	at    int
	start int
}

// sqWQEs finds, for every SQ slot record of the C transcript, the WQE
// its basic block belongs to. It follows the producer (cur_post) through
// the qp.sq doorbell records, and at each dump walks the WQEs posted
// since the last one by their control segments' ds, from the first
// posted WQE on. Blocks of no WQE it can find are left out.
func sqWQEs(lines []string) map[int]wqeAt {
	type wqe struct {
		pos uint64 // first block, counted from the QP's creation
		bbs int
	}
	ctx := map[int]wqeAt{}
	var cur, next uint64 // the producer and the first block not yet walked
	var wqes []wqe
	for i := 0; i < len(lines); i++ {
		f := strings.Fields(lines[i])
		if len(f) == 3 && f[0] == "dbr" && f[1] == "qp.sq" {
			v, err := strconv.ParseUint(f[2], 0, 32)
			switch {
			case err != nil:
			case v < cur&0xffff:
				// A move to RESET starts the queue over (the
				// scripts never post 65536 blocks).
				cur, next, wqes = v, v, nil
			default:
				cur += v - cur&0xffff
			}
			continue
		}
		if len(f) != 4 || f[0] != "slot" || f[1] != "sq" || f[2] != "0" {
			continue
		}
		var bbs [][]byte
		j := i
		for ; j < len(lines); j++ {
			g := strings.Fields(lines[j])
			if len(g) != 4 || g[0] != "slot" || g[1] != "sq" {
				break
			}
			b, _ := hex.DecodeString(g[3])
			bbs = append(bbs, b)
		}
		n := uint64(len(bbs))
		if cur-next > n {
			next = cur // overwritten before any dump saw them
		}
		for next < cur {
			bb := bbs[next%n]
			op, ds := binary.BigEndian.Uint32(bb[0:]), binary.BigEndian.Uint32(bb[4:])&0x3f
			if uint64(op>>8&0xffff) != next&0xffff || ds == 0 {
				next = cur
				break
			}
			k := (int(ds)*16 + sendWQEBB - 1) / sendWQEBB
			wqes = append(wqes, wqe{next, k})
			next += uint64(k)
		}
		owner := make(map[uint64]wqe)
		for _, w := range wqes {
			for m := range uint64(w.bbs) {
				if p := w.pos + m; p < cur && cur-p <= n {
					owner[p%n] = w
				}
			}
		}
		for x := range n {
			w, ok := owner[x]
			if !ok {
				continue
			}
			var b []byte
			for m := range uint64(w.bbs) {
				b = append(b, bbs[(w.pos+m)%n]...)
			}
			ctx[i+int(x)] = wqeAt{wqe: b, at: int((x+n-w.pos%n)%n) * sendWQEBB, start: int(w.pos % n)}
		}
		i = j - 1
	}
	return ctx
}

package uverbs_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/internal/verbstest"
	"github.com/purerdma/purerdma/uverbs"
)

// grhSize is the room a UD receive needs before the payload: the device
// writes the packet's global route header there.
const grhSize = 40

// TestUD sends datagrams between two UD QPs through an address handle.
// On rxe it compares whole completions; on hardware what ibv_poll_cq(3)
// defines of them.
func TestUD(t *testing.T) {
	d := testenv.RoCE(t)
	diffWC := func(want, got []cq.WC) string {
		if d.Hardware() {
			want, got = verbstest.Defined(want, true), verbstest.Defined(got, true)
		}
		return cmp.Diff(want, got)
	}
	r := newRig(t, d)
	a, b := r.qp(t, uverbs.UD, nil), r.qp(t, uverbs.UD, nil)
	const qkey = 0x11111111
	for _, qp := range []*uverbs.QP{a, b} {
		steps := []struct {
			attr uverbs.QPAttr
			mask uverbs.QPAttrMask
		}{
			{uverbs.QPAttr{State: uverbs.QPSInit, Port: 1, QKey: qkey}, uverbs.QPAttrState | uverbs.QPAttrPKeyIndex | uverbs.QPAttrPort | uverbs.QPAttrQKey},
			{uverbs.QPAttr{State: uverbs.QPSRTR}, uverbs.QPAttrState},
			{uverbs.QPAttr{State: uverbs.QPSRTS, SQPSN: 7}, uverbs.QPAttrState | uverbs.QPAttrSQPSN},
		}
		for _, s := range steps {
			if err := qp.Modify(&s.attr, s.mask); err != nil {
				t.Fatalf("UD QP to %s: %v", s.attr.State, err)
			}
		}
	}
	gids, err := r.ctx.GIDTable(1)
	if err != nil {
		t.Fatal(err)
	}
	ah, err := r.pd.CreateAH(uverbs.AHAttr{IsGlobal: true, Port: 1,
		GRH: uverbs.GlobalRoute{DGID: gids[r.gid].GID, SGIDIndex: uint8(r.gid), HopLimit: 64}})
	if err != nil {
		t.Fatalf("CreateAH: %v", err)
	}
	t.Cleanup(func() {
		if err := ah.Close(); err != nil {
			t.Errorf("AH close: %v", err)
		}
	})
	copy(r.buf, "datagram")
	if _, err := b.PostRecv([]uverbs.RecvWR{{ID: 2, SGE: []uverbs.SGE{r.sge(offB, grhSize+64)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PostSend([]uverbs.SendWR{{ID: 1, Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled,
		SGE: []uverbs.SGE{r.sge(0, 8)}, AH: ah, RemoteQPN: b.Num(), RemoteQKey: qkey}}); err != nil {
		t.Fatal(err)
	}
	got := verbstest.SortWC(r.poll(t, 2))
	want := []cq.WC{
		{ID: 1, Opcode: cq.OpSend, ByteLen: 8, QPNum: a.Num()},
		{ID: 2, Opcode: cq.OpRecv, ByteLen: grhSize + 8, QPNum: b.Num(), SrcQP: a.Num(), Flags: grh},
	}
	if diff := diffWC(want, got); diff != "" {
		t.Errorf("completions (-want +got):\n%s", diff)
	}
	verbstest.WantBytes(t, r.buf[offB+grhSize:offB+grhSize+8], "datagram")

	// Reply through an address built from the receive completion and
	// its GRH, as ibv_create_ah_from_wc does: it must route back to a.
	attr, err := r.ctx.AHAttrFromWC(1, got[1].Addr(), r.buf[offB:offB+grhSize])
	if err != nil {
		t.Fatalf("AHAttrFromWC: %v", err)
	}
	if !attr.IsGlobal || attr.Port != 1 || attr.GRH.DGID != gids[r.gid].GID || int(attr.GRH.SGIDIndex) != gids[r.gid].Index || attr.GRH.HopLimit == 0 {
		t.Errorf("AHAttrFromWC = %+v; want global on port 1, to and from GID %v (index %d), with a hop limit", attr, gids[r.gid].GID, gids[r.gid].Index)
	}
	back, err := r.pd.CreateAH(attr)
	if err != nil {
		t.Fatalf("CreateAH from a WC: %v", err)
	}
	t.Cleanup(func() {
		if err := back.Close(); err != nil {
			t.Errorf("AH close: %v", err)
		}
	})
	const offReply = offB + 512
	copy(r.buf[offB+grhSize:], "reply!")
	if _, err := a.PostRecv([]uverbs.RecvWR{{ID: 4, SGE: []uverbs.SGE{r.sge(offReply, grhSize+64)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.PostSend([]uverbs.SendWR{{ID: 3, Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled,
		SGE: []uverbs.SGE{r.sge(offB+grhSize, 6)}, AH: back, RemoteQPN: got[1].SrcQP, RemoteQKey: qkey}}); err != nil {
		t.Fatal(err)
	}
	got = verbstest.SortWC(r.poll(t, 2))
	want = []cq.WC{
		{ID: 3, Opcode: cq.OpSend, ByteLen: 6, QPNum: b.Num()},
		{ID: 4, Opcode: cq.OpRecv, ByteLen: grhSize + 6, QPNum: a.Num(), SrcQP: b.Num(), Flags: grh},
	}
	if diff := diffWC(want, got); diff != "" {
		t.Errorf("reply completions (-want +got):\n%s", diff)
	}
	verbstest.WantBytes(t, r.buf[offReply+grhSize:offReply+grhSize+6], "reply!")
	if _, err := a.PostSend([]uverbs.SendWR{{Opcode: uverbs.WRSend, SGE: []uverbs.SGE{r.sge(0, 8)}}}); !errors.Is(err, uverbs.ErrInvalid) {
		t.Errorf("UD send without an AH: %v, want ErrInvalid", err)
	}
}

// TestDataPathAllocs checks that posting, polling and arming allocate
// nothing on the heap.
func TestDataPathAllocs(t *testing.T) {
	d := testenv.RoCE(t)
	r, a, b := rcPair(t, d)
	recv := []uverbs.RecvWR{{ID: 2, SGE: []uverbs.SGE{r.sge(offB, 64)}}}
	send := []uverbs.SendWR{
		{ID: 1, Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{r.sge(0, 64)}},
		{ID: 3, Opcode: uverbs.WRRDMAWrite, Flags: uverbs.SendSignaled | uverbs.SendInline,
			SGE: []uverbs.SGE{r.sge(0, 16)}, RemoteAddr: r.mr.Addr() + offB + 128, RKey: r.mr.RKey()},
	}
	wc := make([]cq.WC, 4)
	var failed error
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := b.PostRecv(recv); err != nil {
			failed = err
			return
		}
		if _, err := a.PostSend(send); err != nil {
			failed = err
			return
		}
		for got := 0; got < 3; {
			n, err := r.cq.Poll(wc[got:])
			if err != nil {
				failed = err
				return
			}
			got += n
		}
		if err := r.cq.ReqNotify(false); err != nil {
			failed = err
		}
	})
	if failed != nil {
		t.Fatal(failed)
	}
	if allocs != 0 {
		t.Errorf("PostRecv + PostSend + Poll + ReqNotify allocate %v times per round, want 0", allocs)
	}
}

package rdmacm_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/internal/verbstest"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// TestUDP resolves a UD peer through the UDP port space (SIDR on RoCE) and
// sends it a datagram through the address it returns. iWARP has no UD.
func TestUDP(t *testing.T) {
	d := testenv.RoCE(t)
	ctx := ctxT(t)
	l, addr := listen(t, d, rdmacm.UDP)
	c := dialer(t, addr, rdmacm.UDP, qpCap)
	if c.QP().Type() != uverbs.UD {
		t.Fatalf("QP of a UDP ID is %s, want UD", c.QP().Type())
	}
	if err := c.Connect(&rdmacm.ConnParam{PrivateData: []byte("sidr")}); err != nil {
		t.Fatal(err)
	}
	req, err := l.WaitEvent(ctx, rdmacm.EventConnectRequest)
	if err != nil {
		t.Fatal(err)
	}
	hasPrefix(t, "SIDR request", req.Param.PrivateData, "sidr")
	s := req.ID
	if err := s.CreateQP(nil, uverbs.QPInit{Cap: qpCap}); err != nil {
		t.Fatal(err)
	}
	sbuf, sregion := memory(t, s.PD())
	const grh = 40
	if err := s.PostRecv(5, sregion, 0, grh+64); err != nil {
		t.Fatal(err)
	}
	if err := s.Accept(&rdmacm.ConnParam{PrivateData: []byte("ok")}); err != nil {
		t.Fatal(err)
	}
	est, err := c.WaitEvent(ctx, rdmacm.EventEstablished)
	if err != nil {
		t.Fatal(err)
	}
	if est.Param.QPNum != s.QP().Num() || est.Param.QKey == 0 || !est.Param.AH.IsGlobal {
		t.Fatalf("SIDR reply: QPN %d (want %d), QKey %#x, AH %+v", est.Param.QPNum, s.QP().Num(), est.Param.QKey, est.Param.AH)
	}
	hasPrefix(t, "SIDR reply", est.Param.PrivateData, "ok")
	ah, err := c.PD().CreateAH(est.Param.AH)
	if err != nil {
		t.Fatal(err)
	}
	defer ah.Close()
	cbuf, cregion := memory(t, c.PD())
	copy(cbuf, "datagram")
	if _, err := c.QP().PostSend([]uverbs.SendWR{{ID: 9, Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled,
		SGE: []uverbs.SGE{{Addr: cregion.Addr(), Length: 8, LKey: cregion.LKey()}},
		AH:  ah, RemoteQPN: est.Param.QPNum, RemoteQKey: est.Param.QKey}}); err != nil {
		t.Fatal(err)
	}
	if wc, err := c.GetSendComp(ctx); err != nil || wc.Status != cq.Success {
		t.Fatalf("send completion %+v, %v", wc, err)
	}
	wc, err := s.GetRecvComp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []cq.WC{{ID: 5, Opcode: cq.OpRecv, ByteLen: grh + 8, QPNum: s.QP().Num(), SrcQP: c.QP().Num(), Flags: cq.GRH}}
	got := []cq.WC{wc}
	if d.Hardware() {
		want, got = verbstest.Defined(want, true), verbstest.Defined(got, true)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("receive completion (-want +got):\n%s", diff)
	}
	if string(sbuf[grh:grh+8]) != "datagram" {
		t.Errorf("received %q", sbuf[grh:grh+8])
	}
	ah.Close()
	s.Close()
	c.Close()
}

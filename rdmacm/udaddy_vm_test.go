package rdmacm_test

import (
	"context"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/cmtest"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// udaddy's protocol (librdmacm/examples/udaddy.c, defaults): port 7174, 10
// messages of 100 bytes. The client, after SIDR, sends them as sends with
// immediate data holding its QP number; the server replies with as many,
// through an AH made from the first received completion and its GRH
// (ibv_create_ah_from_wc), to the QP number of the immediate data, with
// its own QKey.
const (
	udaddyPort  = 7174
	udaddyCount = 10
	udaddySize  = 100
	grhLen      = 40
)

var udaddyCap = uverbs.QPCap{MaxSendWR: udaddyCount, MaxRecvWR: udaddyCount, MaxSendSGE: 1, MaxRecvSGE: 1}

// TestUdaddyCServerRXE: a Go client against the C udaddy server.
func TestUdaddyCServerRXE(t *testing.T) {
	d := testenv.RoCE(t)
	udaddy := testenv.CTool(t, "udaddy")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := exec.CommandContext(ctx, udaddy, "-b", d.Addr).CombinedOutput()
		done <- result{out, err}
	}()
	// The server's listener is in the connection manager, not a socket:
	// wait for the resolve and SIDR to succeed instead.
	time.Sleep(1 * time.Second)
	c := cmtest.Dial(t, ctx, netip.AddrPortFrom(netip.MustParseAddr(d.Addr), udaddyPort), rdmacm.UDP, udaddyCap, 2*time.Second)
	_, region := memory(t, c.PD())
	for i := range udaddyCount {
		if err := c.PostRecv(uint64(i), region, 0, udaddySize+grhLen); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Connect(&rdmacm.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	est, err := c.WaitEvent(ctx, rdmacm.EventEstablished)
	if err != nil {
		t.Fatal(err)
	}
	ah, err := c.PD().CreateAH(est.Param.AH)
	if err != nil {
		t.Fatal(err)
	}
	defer ah.Close()
	for i := range udaddyCount {
		if _, err := c.QP().PostSend([]uverbs.SendWR{{ID: uint64(i), Opcode: uverbs.WRSendWithImm, Flags: uverbs.SendSignaled,
			Imm: c.QP().Num(), SGE: []uverbs.SGE{{Addr: region.Addr() + 1024, Length: udaddySize, LKey: region.LKey()}},
			AH: ah, RemoteQPN: est.Param.QPNum, RemoteQKey: est.Param.QKey}}); err != nil {
			t.Fatal(err)
		}
		if wc, err := c.GetSendComp(ctx); err != nil || wc.Status != cq.Success {
			t.Fatalf("send %d: %+v, %v", i, wc, err)
		}
	}
	for i := range udaddyCount {
		wc, err := c.GetRecvComp(ctx)
		if err != nil {
			res := <-done
			t.Fatalf("reply %d: %v\nudaddy:\n%s", i, err, res.out)
		}
		if wc.Status != cq.Success || wc.ByteLen != grhLen+udaddySize {
			t.Errorf("reply %d: %+v", i, wc)
		}
	}
	res := <-done
	if res.err != nil || !strings.Contains(string(res.out), "data transfers complete") {
		t.Fatalf("udaddy server: %v\n%s", res.err, res.out)
	}
}

// TestUdaddyCClientRXE: the C udaddy client against a Go server, which
// replies through AHAttrFromWC.
func TestUdaddyCClientRXE(t *testing.T) {
	d := testenv.RoCE(t)
	udaddy := testenv.CTool(t, "udaddy")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ch := cmtest.Channel(t)
	l, err := ch.CreateID(rdmacm.UDP)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Bind(netip.AddrPortFrom(netip.MustParseAddr(d.Addr), udaddyPort)); err != nil {
		t.Fatal(err)
	}
	if err := l.Listen(1); err != nil {
		t.Fatal(err)
	}
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := exec.CommandContext(ctx, udaddy, "-s", d.Addr).CombinedOutput()
		done <- result{out, err}
	}()
	req, err := l.WaitEvent(ctx, rdmacm.EventConnectRequest)
	if err != nil {
		t.Fatal(err)
	}
	s := req.ID
	defer s.Close()
	if err := s.CreateQP(nil, uverbs.QPInit{Cap: udaddyCap}); err != nil {
		t.Fatal(err)
	}
	buf, region := memory(t, s.PD())
	for i := range udaddyCount {
		if err := s.PostRecv(uint64(i), region, 0, udaddySize+grhLen); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Accept(&rdmacm.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	var first cq.WC
	for i := range udaddyCount {
		wc, err := s.GetRecvComp(ctx)
		if err != nil || wc.Status != cq.Success || wc.Opcode != cq.OpRecv || wc.Flags&cq.WithImm == 0 {
			res := <-done
			t.Fatalf("datagram %d: %+v, %v\nudaddy:\n%s", i, wc, err, res.out)
		}
		if i == 0 {
			first = wc
		}
	}
	// Every receive used the buffer's start: its GRH is the last one's,
	// from the same sender as the first.
	attr, err := s.Context().AHAttrFromWC(s.Port(), first.Addr(), buf[:grhLen])
	if err != nil {
		t.Fatal(err)
	}
	ah, err := s.PD().CreateAH(attr)
	if err != nil {
		t.Fatal(err)
	}
	defer ah.Close()
	qa, err := s.QP().Query(uverbs.QPAttrQKey)
	if err != nil {
		t.Fatal(err)
	}
	for i := range udaddyCount {
		if _, err := s.QP().PostSend([]uverbs.SendWR{{ID: uint64(i), Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{{Addr: region.Addr() + 1024, Length: udaddySize, LKey: region.LKey()}},
			AH:  ah, RemoteQPN: first.Imm, RemoteQKey: qa.QKey}}); err != nil {
			t.Fatal(err)
		}
		if wc, err := s.GetSendComp(ctx); err != nil || wc.Status != cq.Success {
			t.Fatalf("reply %d: %+v, %v", i, wc, err)
		}
	}
	res := <-done
	if res.err != nil || !strings.Contains(string(res.out), "data transfers complete") {
		t.Fatalf("udaddy client: %v\n%s", res.err, res.out)
	}
}

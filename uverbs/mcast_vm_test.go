package uverbs_test

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/internal/verbstest"
	"github.com/purerdma/purerdma/uverbs"
)

// udUp moves a UD QP to RTS with qkey.
func udUp(t *testing.T, qp *uverbs.QP, qkey uint32) {
	t.Helper()
	steps := []struct {
		attr uverbs.QPAttr
		mask uverbs.QPAttrMask
	}{
		{uverbs.QPAttr{State: uverbs.QPSInit, Port: 1, QKey: qkey}, uverbs.QPAttrState | uverbs.QPAttrPKeyIndex | uverbs.QPAttrPort | uverbs.QPAttrQKey},
		{uverbs.QPAttr{State: uverbs.QPSRTR}, uverbs.QPAttrState},
		{uverbs.QPAttr{State: uverbs.QPSRTS}, uverbs.QPAttrState | uverbs.QPAttrSQPSN},
	}
	for _, s := range steps {
		if err := qp.Modify(&s.attr, s.mask); err != nil {
			t.Fatalf("UD QP to %s: %v", s.attr.State, err)
		}
	}
}

// mcastQPN is the destination QP number of a multicast send.
const mcastQPN = 0xffffff

// cmQKey is RDMA_UDP_QKEY, the QKey of rdma_cm's UDP port space, which
// mckey uses.
const cmQKey = 0x01234567

// TestMulticastAttachRXE sends a datagram to a multicast group on rxe: the
// QP attached to the group receives it, and after detaching no longer
// does.
func TestMulticastAttachRXE(t *testing.T) {
	d := testenv.RoCE(t)
	r := newRig(t, d)
	a, b := r.qp(t, uverbs.UD, nil), r.qp(t, uverbs.UD, nil)
	const qkey = cmQKey // mckey's, so that it takes our datagrams too
	udUp(t, a, qkey)
	udUp(t, b, qkey)
	// 239.1.2.3, IPv4-mapped as the connection manager names it.
	group := uverbs.GID{10: 0xff, 0xff, 239, 1, 2, 3}
	// rxe sends a multicast datagram out through the IP stack, which
	// loops a copy back to the local rxe only if the interface is a
	// member of the IP group. A bare attach does not make it one; the
	// connection manager's join does (IGMP), so a C mckey receiver joins
	// the group here. It takes both datagrams: the second, sent after the
	// detach, thus provably went out and looped back, yet must not reach
	// the detached QP.
	mckey := testenv.CTool(t, "mckey")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	mc := make(chan []byte, 1)
	go func() {
		out, _ := exec.CommandContext(ctx, mckey, "-m", "239.1.2.3", "-b", d.Addr, "-C", "2").CombinedOutput()
		mc <- out
	}()
	time.Sleep(1500 * time.Millisecond)
	if err := b.AttachMcast(group, 0); err != nil {
		t.Fatalf("AttachMcast: %v", err)
	}
	// An attached QP cannot be destroyed (EBUSY): detach before the
	// rig's cleanup, whatever happens.
	attached := true
	t.Cleanup(func() {
		if attached {
			b.DetachMcast(group, 0)
		}
	})
	ah, err := r.pd.CreateAH(uverbs.AHAttr{IsGlobal: true, Port: 1,
		GRH: uverbs.GlobalRoute{DGID: group, SGIDIndex: uint8(r.gid), HopLimit: 64}})
	if err != nil {
		t.Fatalf("CreateAH to the group: %v", err)
	}
	t.Cleanup(func() { ah.Close() })

	send := func(id uint64) {
		t.Helper()
		copy(r.buf, "to the group")
		if _, err := a.PostSend([]uverbs.SendWR{{ID: id, Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{r.sge(0, 12)}, AH: ah, RemoteQPN: mcastQPN, RemoteQKey: qkey}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.PostRecv([]uverbs.RecvWR{{ID: 2, SGE: []uverbs.SGE{r.sge(offB, grhSize+64)}}}); err != nil {
		t.Fatal(err)
	}
	send(1)
	got := verbstest.SortWC(r.poll(t, 2))
	want := []cq.WC{
		{ID: 1, Opcode: cq.OpSend, ByteLen: 12, QPNum: a.Num()},
		{ID: 2, Opcode: cq.OpRecv, ByteLen: grhSize + 12, QPNum: b.Num(), SrcQP: a.Num(), Flags: grh},
	}
	cmpWant, cmpGot := want, got
	if d.Hardware() {
		cmpWant, cmpGot = verbstest.Defined(want, true), verbstest.Defined(got, true)
	}
	if diff := cmp.Diff(cmpWant, cmpGot); diff != "" {
		t.Errorf("completions (-want +got):\n%s", diff)
	}
	verbstest.WantBytes(t, r.buf[offB+grhSize:offB+grhSize+12], "to the group")
	// The datagram's destination was the group: AHAttrFromWC refuses to
	// make a reply address from it (no GID table holds the group).
	if _, err := r.ctx.AHAttrFromWC(1, got[1].Addr(), r.buf[offB:offB+grhSize]); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("AHAttrFromWC of a multicast datagram: %v, want EINVAL", err)
	}

	if err := b.DetachMcast(group, 0); err != nil {
		t.Fatalf("DetachMcast: %v", err)
	}
	attached = false
	if err := b.DetachMcast(group, 0); err == nil {
		t.Error("second DetachMcast succeeded")
	}
	if _, err := b.PostRecv([]uverbs.RecvWR{{ID: 4, SGE: []uverbs.SGE{r.sge(offB, grhSize+64)}}}); err != nil {
		t.Fatal(err)
	}
	send(3)
	got = r.poll(t, 1)
	if got[0].ID != 3 || got[0].Status != cq.Success {
		t.Errorf("send after detach: %+v", got[0])
	}
	if out := <-mc; !strings.Contains(string(out), "data transfers complete") {
		t.Fatalf("the C mckey receiver did not get both datagrams:\n%s", out)
	}
	// mckey got the second datagram; the detached b must not have.
	var wc [1]cq.WC
	if n, err := r.cq.Poll(wc[:]); n != 0 || err != nil {
		t.Errorf("a detached QP received: %d completions %+v, %v", n, wc, err)
	}
}

// TestMulticastBadRXE: a non-multicast GID is refused before the kernel,
// an RC QP by it.
func TestMulticastBadRXE(t *testing.T) {
	d := testenv.RoCE(t)
	r := newRig(t, d)
	ud, rc := r.qp(t, uverbs.UD, nil), r.qp(t, uverbs.RC, nil)
	udUp(t, ud, 1)
	group := uverbs.GID{10: 0xff, 0xff, 239, 1, 2, 4}
	unicast := uverbs.GID{10: 0xff, 0xff, 192, 168, 77, 1}
	n := testenv.RunBad(t, nil, []testenv.BadCase{
		testenv.Bad("AttachMcast: unicast GID", uverbs.ErrInvalid, func() error { return ud.AttachMcast(unicast, 0) }),
		testenv.Bad("DetachMcast: unicast GID", uverbs.ErrInvalid, func() error { return ud.DetachMcast(unicast, 0) }),
		testenv.Bad("AttachMcast: RC QP", syscall.EINVAL, func() error { return rc.AttachMcast(group, 0) }),
		testenv.Bad("DetachMcast: not attached", syscall.EINVAL, func() error { return ud.DetachMcast(group, 0) }),
	})
	t.Logf("%d bad inputs tried", n)
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func() error{
		"AttachMcast": func() error { return rc.AttachMcast(group, 0) },
		"DetachMcast": func() error { return rc.DetachMcast(group, 0) },
	} {
		if err := f(); !errors.Is(err, uverbs.ErrClosed) {
			t.Errorf("%s on a closed QP: %v, want ErrClosed", name, err)
		}
	}
}

// TestMulticastToCMckeyRXE sends datagrams from a Go UD QP to a group
// that C mckey receivers joined through the connection manager: the Go
// address and send must reach them.
func TestMulticastToCMckeyRXE(t *testing.T) {
	d := testenv.RoCE(t)
	mckey := testenv.CTool(t, "mckey")
	r := newRig(t, d)
	a := r.qp(t, uverbs.UD, nil)
	udUp(t, a, cmQKey)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const count = 5
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := exec.CommandContext(ctx, mckey, "-m", "239.1.2.6", "-b", d.Addr, "-C", strconv.Itoa(count)).CombinedOutput()
		done <- result{out, err}
	}()
	// mckey's output is block-buffered into the pipe, so its "receiving"
	// line cannot be waited for: give it time to join and post its
	// receives (what it joined is checked in its output at the end).
	select {
	case res := <-done:
		t.Fatalf("mckey ended early: %v\n%s", res.err, res.out)
	case <-time.After(1500 * time.Millisecond):
	}
	group := uverbs.GID{10: 0xff, 0xff, 239, 1, 2, 6}
	ah, err := r.pd.CreateAH(uverbs.AHAttr{IsGlobal: true, Port: 1,
		GRH: uverbs.GlobalRoute{DGID: group, SGIDIndex: uint8(r.gid), HopLimit: 64}})
	if err != nil {
		t.Fatalf("CreateAH to the group: %v", err)
	}
	t.Cleanup(func() { ah.Close() })
	for i := range count {
		if _, err := a.PostSend([]uverbs.SendWR{{ID: uint64(i), Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{r.sge(0, 100)}, AH: ah, RemoteQPN: mcastQPN, RemoteQKey: cmQKey}}); err != nil {
			t.Fatal(err)
		}
		r.poll(t, 1)
		time.Sleep(10 * time.Millisecond)
	}
	res := <-done
	if res.err != nil || !strings.Contains(string(res.out), "joined dgid: ::ffff:239.1.2.6") || !strings.Contains(string(res.out), "data transfers complete") {
		t.Fatalf("mckey receiver: %v\n%s", res.err, res.out)
	}
	t.Logf("mckey receiver:\n%s", res.out)
}

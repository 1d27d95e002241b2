package rdmacm_test

import (
	"context"
	"errors"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// mcastID resolves a UDP ID from the device's address to group, makes its
// QP and joins the group, returning the MULTICAST_JOIN event.
func mcastID(t *testing.T, ctx context.Context, d testenv.Dev, group netip.Addr) (*rdmacm.ID, *rdmacm.Event) {
	t.Helper()
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	id, err := ch.CreateID(rdmacm.UDP)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { id.Close() })
	if err := id.ResolveAddr(netip.AddrPortFrom(netip.MustParseAddr(d.Addr), 0), netip.AddrPortFrom(group, 0), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := id.WaitEvent(ctx, rdmacm.EventAddrResolved); err != nil {
		t.Fatal(err)
	}
	if err := id.CreateQP(nil, uverbs.QPInit{Cap: qpCap}); err != nil {
		t.Fatal(err)
	}
	if err := id.JoinMulticast(group); err != nil {
		t.Fatalf("JoinMulticast: %v", err)
	}
	ev, err := id.WaitEvent(ctx, rdmacm.EventMulticastJoin)
	if err != nil {
		t.Fatal(err)
	}
	want := uverbs.GID(netip.AddrFrom16(group.As16()).As16())
	if group.Is4() {
		want = uverbs.GID(netip.AddrFrom16(netip.AddrFrom4(group.As4()).As16()).As16())
	}
	if ev.Param.QPNum != 0xffffff || ev.Param.QKey != 0x01234567 || !ev.Param.AH.IsGlobal || ev.Param.AH.GRH.DGID != want {
		t.Fatalf("MULTICAST_JOIN: QPN %#x (want 0xffffff), QKey %#x (want RDMA_UDP_QKEY), AH %+v (want global to %v)",
			ev.Param.QPNum, ev.Param.QKey, ev.Param.AH, want)
	}
	return id, ev
}

// TestMulticastFromCMckeyRXE joins a group through the connection manager
// and receives what a C mckey sender sends to it.
//
// On Linux 6.12 rxe loses some of mckey's back-to-back multicast
// datagrams, between two C mckeys as well (a C receiver of 4 gets fewer
// and waits forever), while 6.1 delivers them all; the Go sender of
// TestMulticastToCMckeyRXE paces its sends and loses none. Why is not
// traced (docs/kernel-notes.md).
func TestMulticastFromCMckeyRXE(t *testing.T) {
	d := testenv.RoCE(t)
	if d.Driver == "rxe" && testenv.KernelAtLeast(6, 12) {
		// A kernel defect, not our side: C mckey to C mckey loses them
		// the same way on this kernel; in four runs 0, 0, 1 and 3 of 4
		// arrived here.
		t.Skipf("rxe on Linux %s loses multicast datagrams a just-joined sender sends back to back (C to C too; docs/kernel-notes.md); runs on 6.1", testenv.KernelRelease())
	}
	mckey := testenv.CTool(t, "mckey")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	group := netip.MustParseAddr("239.1.2.8")
	id, _ := mcastID(t, ctx, d, group)
	_, region := memory(t, id.PD())
	const count, grh = 4, 40
	for i := range count {
		if err := id.PostRecv(uint64(i), region, i*256, grh+200); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.CommandContext(ctx, mckey, "-m", group.String(), "-b", d.Addr, "-s", "-C", strconv.Itoa(count)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "data transfers complete") {
		t.Fatalf("mckey sender: %v\n%s", err, out)
	}
	for got := 0; got < count; got++ {
		wc, err := id.GetRecvComp(ctx)
		if err != nil {
			t.Fatalf("datagram %d: %v\nmckey:\n%s", got, err, out)
		}
		if wc.Status != cq.Success || wc.Flags&cq.GRH == 0 || wc.ByteLen <= grh {
			t.Errorf("datagram %d: %+v", got, wc)
		}
	}

	if err := id.LeaveMulticast(group); err != nil {
		t.Fatalf("LeaveMulticast: %v", err)
	}
	if err := id.LeaveMulticast(group); !errors.Is(err, rdmacm.ErrNotJoined) {
		t.Errorf("second LeaveMulticast: %v, want ErrNotJoined", err)
	}
}

// TestMulticastToCMckeyRXE joins a group through the connection manager
// and sends to it, with the address and QKey of the join event, for a C
// mckey receiver.
func TestMulticastToCMckeyRXE(t *testing.T) {
	d := testenv.RoCE(t)
	mckey := testenv.CTool(t, "mckey")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	group := netip.MustParseAddr("239.1.2.9")
	const count = 4
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := exec.CommandContext(ctx, mckey, "-m", group.String(), "-b", d.Addr, "-C", strconv.Itoa(count)).CombinedOutput()
		done <- result{out, err}
	}()
	// mckey's output is block-buffered into the pipe: give it time to
	// join and post its receives.
	select {
	case res := <-done:
		t.Fatalf("mckey ended early: %v\n%s", res.err, res.out)
	case <-time.After(1500 * time.Millisecond):
	}
	id, ev := mcastID(t, ctx, d, group)
	ah, err := id.PD().CreateAH(ev.Param.AH)
	if err != nil {
		t.Fatal(err)
	}
	defer ah.Close()
	_, region := memory(t, id.PD())
	for i := range count {
		if _, err := id.QP().PostSend([]uverbs.SendWR{{ID: uint64(i), Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{{Addr: region.Addr(), Length: 100, LKey: region.LKey()}},
			AH:  ah, RemoteQPN: ev.Param.QPNum, RemoteQKey: ev.Param.QKey}}); err != nil {
			t.Fatal(err)
		}
		if wc, err := id.GetSendComp(ctx); err != nil || wc.Status != cq.Success {
			t.Fatalf("send %d: %+v, %v", i, wc, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	res := <-done
	if res.err != nil || !strings.Contains(string(res.out), "data transfers complete") {
		t.Fatalf("mckey receiver: %v\n%s", res.err, res.out)
	}
}

func TestMulticastBad(t *testing.T) {
	testenv.RoCE(t) // the connection manager's device node
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	tcp, err := ch.CreateID(rdmacm.TCP)
	if err != nil {
		t.Fatal(err)
	}
	udp, err := ch.CreateID(rdmacm.UDP)
	if err != nil {
		t.Fatal(err)
	}
	group := netip.MustParseAddr("239.1.2.10")
	n := testenv.RunBad(t, nil, []testenv.BadCase{
		testenv.Bad("JoinMulticast: unicast address", uverbs.ErrInvalid, func() error { return udp.JoinMulticast(netip.MustParseAddr("192.0.2.1")) }),
		testenv.Bad("JoinMulticast: zero address", uverbs.ErrInvalid, func() error { return udp.JoinMulticast(netip.Addr{}) }),
		testenv.Bad("JoinMulticast: TCP port space", uverbs.ErrInvalid, func() error { return tcp.JoinMulticast(group) }),
		testenv.Bad("LeaveMulticast: not joined", rdmacm.ErrNotJoined, func() error { return udp.LeaveMulticast(group) }),
	})
	t.Logf("%d bad inputs tried", n)
	udp.Close()
	tcp.Close()
	for name, f := range map[string]func() error{
		"JoinMulticast":  func() error { return udp.JoinMulticast(group) },
		"LeaveMulticast": func() error { return udp.LeaveMulticast(group) },
	} {
		if err := f(); !errors.Is(err, rdmacm.ErrClosed) {
			t.Errorf("%s on a closed ID: %v, want ErrClosed", name, err)
		}
	}
}

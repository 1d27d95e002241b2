package rdmacm_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/cmtest"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rdmacm"
)

// parked starts a goroutine that waits on the channel with wait until
// the test ends, and gives it a moment to be the one reading the file.
// Its result is returned at the end, for the test to check.
func parked(t *testing.T, wait func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- wait(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("the parked wait: %v, want context.Canceled", err)
		}
	})
	time.Sleep(200 * time.Millisecond)
}

// TestGetEventDeadlineWhileAnotherWaits: a GetEvent ends at its
// context's deadline while another goroutine is parked reading the same
// channel. It used to wait for the other's read to find an event, which
// here never comes (the soak's event watcher and its own wait for
// ESTABLISHED: test/soak).
func TestGetEventDeadlineWhileAnotherWaits(t *testing.T) {
	testenv.Devices(t) // the VM, and the leak check
	ch := cmtest.Channel(t)
	parked(t, func(ctx context.Context) error { _, err := ch.GetEvent(ctx); return err })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	got := make(chan error, 1)
	go func() { _, err := ch.GetEvent(ctx); got <- err }()
	select {
	case err := <-got:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("GetEvent: %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(30 * time.Second):
		// The parked wait's cleanup ends it, and this one then.
		t.Fatal("GetEvent with a 300ms deadline still waits after 30s, behind the other reader")
	}
}

// TestWaitEventWhileAnotherWaits: two IDs of one channel, each waited
// for by a goroutine of its own. The one whose event never comes parks
// reading the file; when it reads the other's event it must hand it
// over, and the other must get it, not wait for the file in turn.
func TestWaitEventWhileAnotherWaits(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ch := cmtest.Channel(t)
		idle, err := ch.CreateID(rdmacm.TCP)
		if err != nil {
			t.Fatal(err)
		}
		parked(t, func(ctx context.Context) error {
			_, err := idle.WaitEvent(ctx, rdmacm.EventAddrResolved)
			return err
		})
		id, err := ch.CreateID(rdmacm.TCP)
		if err != nil {
			t.Fatal(err)
		}
		addr := netip.AddrPortFrom(netip.MustParseAddr(d.Addr), 7471)
		if err := id.ResolveAddr(netip.AddrPort{}, addr, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := id.WaitEvent(ctx, rdmacm.EventAddrResolved)
			got <- err
		}()
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("WaitEvent while another ID's wait reads the channel: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("WaitEvent with a 30s deadline still waits after 60s: its event is queued, and it waits for the file")
		}
	})
}

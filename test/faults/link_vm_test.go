package faults_test

import (
	"context"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/rtnl"
	"github.com/purerdma/purerdma/internal/testenv"
)

// TestLinkDown sets the device's network device down in the middle of a
// stream of reads and writes, and up again after downFor. The client
// disconnects only once the link is back: on rxe a DREQ sent while the
// link is down fails on the GSI QP (QP1), which then stays in the error
// state and takes the connection manager of rxe0 down with it until the
// device is re-created (see docs/kernel-notes.md).
func TestLinkDown(t *testing.T) {
	const downFor = 3 * time.Second
	testenv.RequireVM(t)
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		p := connect(t, d, streamConfig(), usageServer)
		// Up again after downFor, and in any case at the end of the test:
		// later tests need the device.
		restored := make(chan error, 1)
		t.Cleanup(func() {
			if err := rtnl.SetLink(d.Netdev, true); err != nil {
				t.Errorf("%s up: %v", d.Netdev, err)
			}
		})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		asyncEvents := make(chan string, 8)
		go func() {
			defer close(asyncEvents)
			for {
				ev, err := p.client.uctx.AsyncEvent(ctx)
				if err != nil {
					return
				}
				asyncEvents <- ev.String()
			}
		}()
		var upErr error
		up := false
		o := stream(t, p.cc, p.client.mr, p.remote, func() {
			if err := rtnl.SetLink(d.Netdev, false); err != nil {
				t.Fatalf("%s down: %v", d.Netdev, err)
			}
			time.AfterFunc(downFor, func() { restored <- rtnl.SetLink(d.Netdev, true) })
		}, func() {
			upErr, up = <-restored, true
			disconnect(t, p.cc)()
		}, strands(d), 60*time.Second)
		t.Logf("%s: link down at 0, up at %v: %v", d.Name, downFor, o)
		if !up {
			upErr = <-restored
		}
		if upErr != nil {
			t.Fatalf("%s up: %v", d.Netdev, upErr)
		}
		time.Sleep(time.Second)
		cancel()
		for ev := range asyncEvents {
			t.Logf("%s: async event %s", d.Name, ev)
		}
		p.close(t)
		reconnect(t, d)
	})
}

package faults_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/rdmanl"
	"github.com/purerdma/purerdma/internal/rtnl"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rpma"
)

// scratchDevice creates a device of d's driver on a veth pair of its
// own, with the address 192.168.<subnet>.1, and returns it; the test
// deletes what is left of it at its end. The devices the VM made are
// not touched.
func scratchDevice(t *testing.T, d testenv.Dev, subnet int) testenv.Dev {
	t.Helper()
	s := testenv.Dev{
		Name:   "f" + d.Driver + "0",
		Driver: d.Driver,
		Netdev: "f" + d.Driver + "v0",
		Addr:   fmt.Sprintf("192.168.%d.1", subnet),
	}
	r, err := rtnl.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	peer := "f" + d.Driver + "v1"
	if err := r.AddVeth(s.Netdev, peer); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r, err := rtnl.Dial()
		if err == nil {
			err = r.DelLink(s.Netdev)
			r.Close()
		}
		if err != nil {
			t.Errorf("delete %s: %v", s.Netdev, err)
		}
	})
	for _, n := range []string{s.Netdev, peer} {
		if err := r.SetUp(n); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.AddAddr(s.Netdev, netip.MustParsePrefix(s.Addr+"/24")); err != nil {
		t.Fatal(err)
	}
	c, err := rdmanl.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.LinkAdd(s.Name, s.Driver, s.Netdev); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := rdmanl.Dial()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		if _, err := c.DeviceByName(s.Name); err == nil {
			c.LinkDel(s.Name)
		}
	})
	// The uverbs node and the address appear asynchronously.
	ctx := ctxFor(t, 10*time.Second)
	for {
		uctx, err := rpma.ContextByAddr(ctx, netip.MustParseAddr(s.Addr), rpma.ContextLocal)
		if err == nil {
			uctx.Close()
			return s
		}
		if ctx.Err() != nil {
			t.Fatalf("%s not usable after 10s: %v", s.Name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDeviceRemoval deletes the RDMA device under a connection (`rdma
// link delete`). rdma_cm tells the ends with DEVICE_REMOVAL, which is
// ConnLost (or the other end first closes the connection: ConnClosed); the deletion waits until the process has closed everything
// it had on the device (neither rxe nor siw can disassociate a user
// context), and a new connection on another device works afterwards. The
// test uses a device of its own, so that rxe0 and siw0 stay.
func TestDeviceRemoval(t *testing.T) {
	testenv.RequireVM(t)
	subnet := map[string]int{"rxe": 97, "siw": 98}
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		s := scratchDevice(t, d, subnet[d.Driver])
		deleted := make(chan error, 1)
		start := time.Now()
		t.Run("connection", func(t *testing.T) {
			// Its cleanups close what the deletion waits for.
			p := connect(t, s, nil, usageServer)
			go func() {
				c, err := rdmanl.Dial()
				if err == nil {
					err = c.LinkDel(s.Name)
					c.Close()
				}
				deleted <- err
			}()
			// Both ends sit on the deleted device. The kernel tells the
			// IDs one after the other, and the teardown of the first
			// one's connection (a DREQ on rxe, the TCP close on siw) can
			// reach the other end before its own DEVICE_REMOVAL: that end
			// then sees ConnClosed. At least one sees ConnLost.
			lost := 0
			for _, c := range []*rpma.Conn{p.cc, p.sc} {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				ev, err := c.NextEvent(ctx)
				cancel()
				t.Logf("%s: %v, %v after %v", s.Name, ev, err, time.Since(start))
				if err != nil || ev != rpma.ConnLost && ev != rpma.ConnClosed {
					t.Errorf("event %v, %v; want %v or %v", ev, err, rpma.ConnLost, rpma.ConnClosed)
				}
				if ev == rpma.ConnLost {
					lost++
				}
			}
			if lost == 0 {
				t.Errorf("no end saw %v", rpma.ConnLost)
			}
		})
		select {
		case err := <-deleted:
			if err != nil {
				t.Fatalf("link delete: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("link delete still waits 30s after everything was closed")
		}
		t.Logf("%s deleted after %v", s.Name, time.Since(start))
		reconnect(t, d)
	})
}

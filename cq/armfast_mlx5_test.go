package cq

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/conformance"
	"github.com/purerdma/purerdma/internal/provider/mlx5"
)

// TestReqNotifyFastMLX5: ReqNotify rings an mlx5 CQ's doorbell itself
// (the driver's ArmRecord inlined, then mmio.FencedStore64), not through
// the driver's Arm. It must ring the same doorbell, with the same value,
// as the driver's Arm does on a twin CQ given the same history: the arm
// sequence number (completion events), the consumer index (polled
// completions) and the solicited flag. The value is a literal too: the
// word libmlx5's mlx5_arm_cq writes, big-endian, then the harness's CQ
// number 0x3c. (The doorbell record's word is the doorbell's first half:
// ArmRecord writes both from one value, and the driver's TestArm checks
// the record.) ReqNotify rings the same on its slow way (armWays).
func TestReqNotifyFastMLX5(t *testing.T) {
	setup := conformance.Setup{Provider: "mlx5", SQ: 16, RQ: 16, CQ: 16, MaxSendSGE: 1, MaxRecvSGE: 1}
	cases := []struct {
		name      string
		events    int // completion events before the arm
		polled    int // completions polled before the arm
		solicited bool
		want      []byte // the UAR's CQ doorbell after the arm
	}{
		{"first", 0, 0, false, []byte{0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3c}},
		{"solicited", 0, 0, true, []byte{0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3c}},
		{"after polls", 0, 5, false, []byte{0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x3c}},
		{"after events", 3, 0, false, []byte{0x30, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3c}},
		{"sequence wraps", 5, 2, true, []byte{0x11, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x3c}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, way := range armWays {
				h := conformance.NewMLX5Host(t, setup)
				c := mlx5CQ(h.CQ)
				if c.drv.arm == nil {
					t.Fatal("setRing left arm nil: ReqNotify would not take the mlx5 arm's path")
				}
				h.FillRQ()
				h.Fill(uint32(tc.polled))
				if tc.polled > 0 {
					if n, err := c.Poll(make([]WC, tc.polled)); n != tc.polled || err != nil {
						t.Fatalf("Poll: %d, %v", n, err)
					}
				}
				for range tc.events {
					h.CQ.(provider.EventCounter).Event()
				}
				if way == "driver" {
					if !h.CQ.Arm(tc.solicited) {
						t.Fatal("the driver's Arm did not arm")
					}
				} else if err := armWay(t, way, c)(tc.solicited); err != nil {
					t.Fatalf("%s: %v", way, err)
				}
				if got := h.CQ.(*mlx5.CQ).ArmUAR()[:]; !bytes.Equal(got, tc.want) {
					t.Errorf("%s rang % x, want % x", way, got, tc.want)
				}
			}
		})
	}
}

// armWays are the ways an mlx5 CQ arms: ReqNotify's fast way (one CAS),
// its slow way (notifySlow) while another goroutine holds the lock and
// on an owned CQ, the owner's Poller.ReqNotify (no lock), and the
// driver's own Arm.
var armWays = []string{"fast", "contended", "owned", "poller", "driver"}

// armWay returns ReqNotify on c the way way arms, which checks that the
// arm gave the lock back.
func armWay(t *testing.T, way string, c *CQ) func(bool) error {
	t.Helper()
	arm := c.ReqNotify
	switch way {
	case "contended":
		arm = func(solicited bool) error {
			held, done := make(chan struct{}), make(chan struct{})
			go func() {
				c.life.Lock()
				close(held)
				time.Sleep(100 * time.Microsecond) // ReqNotify finds the lock held
				c.life.Unlock()
				close(done)
			}()
			<-held
			err := c.ReqNotify(solicited)
			<-done
			return err
		}
	case "owned", "poller":
		p, err := c.Own()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Release)
		if way == "poller" {
			arm = p.ReqNotify
		}
	}
	return func(solicited bool) error {
		err := arm(solicited)
		released := false
		if way == "poller" {
			// The owner must have left the gate: Lock shuts it and
			// waits for that.
			released = lockWithin(c, 10*time.Second)
		} else if way == "owned" {
			if released = c.life.Enter(); released {
				c.life.Leave()
			}
		} else if released = c.life.TryLockFree(); released {
			c.life.UnlockFree()
		}
		if !released {
			t.Fatalf("%s: ReqNotify kept the CQ's lock", way)
		}
		return err
	}
}

// lockWithin takes and gives back c's lock, and reports whether it could
// within d: on an owned CQ, Lock waits for the owner to leave the gate.
func lockWithin(c *CQ, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		c.life.Lock()
		c.life.Unlock()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// TestReqNotifyAllocsMLX5: the mlx5 arm allocates nothing.
func TestReqNotifyAllocsMLX5(t *testing.T) {
	h := conformance.NewMLX5Host(t, conformance.Setup{Provider: "mlx5", SQ: 4, RQ: 4, CQ: 4, MaxSendSGE: 1, MaxRecvSGE: 1})
	c := mlx5CQ(h.CQ)
	var err error
	if n := testing.AllocsPerRun(100, func() { err = c.ReqNotify(true) }); n != 0 || err != nil {
		t.Errorf("ReqNotify: %v allocations, %v", n, err)
	}
	p, err := c.Own()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	if n := testing.AllocsPerRun(100, func() { err = p.ReqNotify(true) }); n != 0 || err != nil {
		t.Errorf("Poller.ReqNotify: %v allocations, %v", n, err)
	}
}

// mlx5CQ is a CQ over the driver's CQ ring as create makes it (setRing),
// without the kernel object: ReqNotify takes the mlx5 arm's path.
func mlx5CQ(ring provider.CQ) *CQ {
	c := &CQ{}
	c.setRing(ring)
	return c
}

// TestPollerArmsWithoutLock: the owner's arm takes no lock. With the CQ's
// lock word set to held (as no goroutine could leave it: a holder shuts
// an owned gate), the owner still arms at once, and rings the doorbell;
// an arm through the lock would wait for ever.
func TestPollerArmsWithoutLock(t *testing.T) {
	h := conformance.NewMLX5Host(t, conformance.Setup{Provider: "mlx5", SQ: 4, RQ: 4, CQ: 4, MaxSendSGE: 1, MaxRecvSGE: 1})
	c := mlx5CQ(h.CQ)
	p, err := c.Own()
	if err != nil {
		t.Fatal(err)
	}
	// The lock word is the CQ's first (spin.GateLock.v): 2 while owned
	// and free, 3 while also held.
	word := (*atomic.Uint32)(unsafe.Pointer(&c.life))
	if v := word.Load(); v != 2 {
		t.Fatalf("the lock word of an owned, free CQ is %d, want 2: its layout changed", v)
	}
	word.Store(3)
	done := make(chan error, 1)
	go func() { done <- p.ReqNotify(true) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		word.Store(2) // lets the locked arm through, and the test end
		t.Fatal("Poller.ReqNotify waited for the CQ's lock")
	}
	word.Store(2)
	if got, want := h.CQ.(*mlx5.CQ).ArmUAR()[:], []byte{0x01, 0, 0, 0, 0, 0, 0, 0x3c}; !bytes.Equal(got, want) {
		t.Errorf("the owner's arm rang % x, want % x", got, want)
	}
	p.Release()
}

package cq

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/provider/conformance"
)

// pollWays are the ways a CQ polls: Poll and the owner's Poll, which
// reach the driver by its concrete type (drivers: what create and Own
// set), and Poll on a CQ made from its ring alone (drainCopy: the
// driver's Poll through the provider.CQ interface, into the CQ's
// scratch, the general way, which answers the empty CQ inside the
// driver). Poll's way in is one CAS on a free lock; the two slow ways
// make it miss: "contended" polls while another goroutine holds the lock
// (Poll waits in pollSlow until it lets go), "owned-locked" polls an
// owned CQ through CQ.Poll (pollSlow's Lock shuts the owner out).
var pollWays = []string{"locked", "owned", "ring", "contended", "owned-locked"}

// pollWay returns the poll of way on a CQ made by mk: mk's CQ, with its
// drivers, or without them. Each poll checks that it gave the lock (or
// the owner's gate) back: a poll that kept it would hang the next one.
func pollWay(t *testing.T, way string, c *CQ) func([]WC) (int, error) {
	t.Helper()
	poll := c.Poll
	switch way {
	case "owned", "owned-locked":
		p, err := c.Own()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Release)
		if way == "owned" {
			poll = p.Poll
		}
	case "ring":
		c.drv = drivers{}
	case "contended":
		poll = func(wc []WC) (int, error) {
			held, done := make(chan struct{}), make(chan struct{})
			go func() {
				c.life.Lock()
				close(held)
				time.Sleep(100 * time.Microsecond) // Poll finds the lock held
				c.life.Unlock()
				close(done)
			}()
			<-held
			n, err := c.Poll(wc)
			<-done
			return n, err
		}
	}
	if way != "ring" && c.drv == (drivers{}) {
		t.Fatal("the CQ has no drivers")
	}
	return func(wc []WC) (int, error) {
		n, err := poll(wc)
		released := false
		if strings.HasPrefix(way, "owned") {
			if released = c.life.Enter(); released {
				c.life.Leave()
			}
		} else if released = c.life.TryLockFree(); released {
			c.life.UnlockFree()
		}
		if !released {
			t.Fatalf("%s: Poll kept the CQ's lock", way)
		}
		return n, err
	}
}

// TestPollWaysAgree polls the same completions, on rxe and siw rings
// that wrap, with failures among them (whose undefined fields Poll
// clears), in polls of 0, 1, 3 and 16, some on the empty CQ, every way
// (pollWays), and compares what each poll returns and how many slots
// each way has handed back to the kernel.
func TestPollWaysAgree(t *testing.T) {
	sizes := []int{1, 3, 16, 0, 1, 16, 16, 3, 1, 0, 16}
	for _, rr := range iterRings {
		t.Run(rr.name, func(t *testing.T) {
			rings := make([]*iterRing, len(pollWays))
			polls := make([]func([]WC) (int, error), len(pollWays))
			for i, way := range pollWays {
				rings[i] = rr.mk(t)
				polls[i] = pollWay(t, way, rings[i].c)
			}
			for round, k := range sizes {
				if round%3 == 1 {
					for _, r := range rings {
						putSome(r, 7) // wraps the 16 slots
					}
				}
				var want []WC
				for i, way := range pollWays {
					wc := make([]WC, k)
					for j := range wc {
						wc[j] = WC{ID: 0xdead, Status: 0x77, ByteLen: 0x55, Imm: 0x44, SrcQP: 0x33, SLID: 0x22}
					}
					n, err := polls[i](wc)
					if err != nil {
						t.Fatalf("poll %d (%s): %v", round, way, err)
					}
					if i == 0 {
						want = wc[:n]
					} else if diff := cmp.Diff(want, wc[:n]); diff != "" {
						t.Errorf("poll %d of %d: %s differs from %s (-%s +%s):\n%s", round, k, way, pollWays[0], pollWays[0], way, diff)
					}
					if back, wantBack := rings[i].back(), rings[0].back(); back != wantBack {
						t.Errorf("poll %d of %d: %s handed back %d slots, %s %d", round, k, way, back, pollWays[0], wantBack)
					}
				}
			}
		})
	}
}

// TestPollWaysAgreeMLX5 is TestPollWaysAgree on mlx5's host CQ, whose
// CQEs the device writes all alike (receives with immediate data): the
// counts of full and empty polls, and the completions, agree every way.
// (The mlx5 package's TestPollFast holds Empty and PollFound, which Poll
// calls, to pollGeneral's records.)
func TestPollWaysAgreeMLX5(t *testing.T) {
	sizes := []int{1, 3, 16, 0, 1, 16, 16, 3, 1, 0, 16}
	for _, way := range pollWays {
		t.Run(way, func(t *testing.T) {
			h := conformance.NewMLX5Host(t, conformance.MLX5BenchSetup)
			h.FillRQ()
			poll := pollWay(t, way, onRing(h.CQ))
			avail := 0
			for round, k := range sizes {
				if round%3 == 1 {
					h.Fill(7)
					avail += 7
				}
				wc := make([]WC, k)
				n, err := poll(wc)
				if want := min(k, avail); n != want || err != nil {
					t.Fatalf("poll %d of %d: %d, %v; want %d", round, k, n, err, want)
				}
				avail -= n
				for _, w := range wc[:n] {
					if w.ID != 9 || w.Status != Success || w.Imm != 0x01020304 || w.ByteLen != 4096 || w.Opcode != OpRecv {
						t.Fatalf("poll %d: completion %+v", round, w)
					}
				}
			}
		})
	}
}

// TestPollClosed closes a CQ with completions in its ring, as Close does
// under the lock (closeRing), then polls it every way: a closed CQ has no
// driver by type, and Poll's fast way, which has no closed check of its
// own, must send it to pollOther, which returns ErrClosed, without a look
// at the ring. The poll of a Poller taken before the close, and ReqNotify
// (the CQ's and the Poller's), say the same.
func TestPollClosed(t *testing.T) {
	cqs := []struct {
		name string
		mk   func(*testing.T) *CQ
	}{
		{"rxe", func(t *testing.T) *CQ { r := newIterRxe(t); putSome(r, 3); return r.c }},
		{"siw", func(t *testing.T) *CQ { r := newIterSiw(t); putSome(r, 3); return r.c }},
		{"mlx5", func(t *testing.T) *CQ {
			h := conformance.NewMLX5Host(t, conformance.MLX5BenchSetup)
			h.FillRQ()
			h.Fill(3)
			return onRing(h.CQ)
		}},
	}
	for _, tc := range cqs {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.mk(t)
			p, err := c.Own()
			if err != nil {
				t.Fatal(err)
			}
			c.life.Release(c.closeRing)
			polls := map[string]func([]WC) (int, error){"CQ.Poll": c.Poll, "Poller.Poll": p.Poll}
			for name, poll := range polls {
				wc := make([]WC, 4)
				if n, err := poll(wc); n != 0 || !errors.Is(err, ErrClosed) {
					t.Errorf("%s after Close = %d, %v; want 0, ErrClosed", name, n, err)
				}
			}
			if err := c.ReqNotify(false); !errors.Is(err, ErrClosed) {
				t.Errorf("ReqNotify after Close: %v", err)
			}
			if err := p.ReqNotify(false); !errors.Is(err, ErrClosed) {
				t.Errorf("Poller.ReqNotify after Close: %v", err)
			}
			if c.life.TryLockFree() {
				c.life.UnlockFree()
			} else {
				t.Error("a poll of the closed CQ kept its lock")
			}
		})
	}
}

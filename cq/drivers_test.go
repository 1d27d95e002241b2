package cq

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/provider/conformance"
)

// pollWays are the ways a CQ polls: Poll and the owner's Poll, which
// reach the driver by its concrete type (drivers: what create and Own
// set), and Poll on a CQ made from its ring alone (drainCopy: the
// driver's Poll through the provider.CQ interface, into the CQ's
// scratch, the general way, which answers the empty CQ inside the
// driver).
var pollWays = []string{"locked", "owned", "ring"}

// pollWay returns the poll of way on a CQ made by mk: mk's CQ, with its
// drivers, or without them.
func pollWay(t *testing.T, way string, c *CQ) func([]WC) (int, error) {
	t.Helper()
	switch way {
	case "owned":
		p, err := c.Own()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Release)
		return p.Poll
	case "ring":
		c.drv = drivers{}
		return c.Poll
	}
	if c.drv == (drivers{}) {
		t.Fatal("the CQ has no drivers")
	}
	return c.Poll
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

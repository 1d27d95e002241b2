package cq

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/purerdma/purerdma/internal/provider/conformance"
	"github.com/purerdma/purerdma/uverbs"
)

// TestPollerExcludesLockers: an owner polls a full rxe ring one
// completion at a time without the lock while goroutines poll it with
// CQ.Poll, which takes the lock and so shuts the owner's gate: every
// completion is polled exactly once, and the race detector checks that
// the gate keeps the lockers' and the owner's accesses to the driver's
// cursors apart.
func TestPollerExcludesLockers(t *testing.T) {
	c, fill, _ := hostCQ(t)
	fill()
	p, err := c.Own()
	if err != nil {
		t.Fatal(err)
	}
	pollAll := func(poll func([]WC) (int, error)) (int, error) {
		wc := make([]WC, 1)
		polled := 0
		for {
			n, err := poll(wc)
			if err != nil || n == 0 {
				return polled, err
			}
			if wc[0].ID != 9 {
				return polled, fmt.Errorf("completion %+v", wc[0])
			}
			polled++
		}
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		locked int
	)
	for range 2 {
		wg.Go(func() {
			n, err := pollAll(c.Poll)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			locked += n
			mu.Unlock()
		})
	}
	owned, err := pollAll(p.Poll)
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if want := int(conformance.BenchSetup.CQ) - 1; owned+locked != want {
		t.Fatalf("the owner polled %d completions and CQ.Poll %d, want %d in all", owned, locked, want)
	}
	t.Logf("the owner polled %d completions, CQ.Poll %d", owned, locked)
	if _, err := c.Own(); !errors.Is(err, uverbs.ErrBusy) {
		t.Fatalf("a second Own: %v, want ErrBusy", err)
	}
	p.Release()
	if _, err := p.Poll(make([]WC, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Poll after Release: %v, want ErrClosed", err)
	}
	q, err := c.Own()
	if err != nil {
		t.Fatalf("Own after Release: %v", err)
	}
	q.Release()
}

// TestPollerAllocs: the owner's poll allocates nothing.
func TestPollerAllocs(t *testing.T) {
	c, fill, refill := hostCQ(t)
	fill()
	p, err := c.Own()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	var failed error
	allocs := testing.AllocsPerRun(100, func() {
		var wc [4]WC
		n, err := p.Poll(wc[:])
		if err != nil {
			failed = err
		}
		if n < len(wc) {
			refill()
		}
	})
	if failed != nil {
		t.Fatal(failed)
	}
	if allocs != 0 {
		t.Fatalf("Poller.Poll allocates %v times, want 0", allocs)
	}
}

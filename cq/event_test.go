package cq

import (
	"context"
	"encoding/binary"
	"os"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/verbs"
)

// countingCQ is a ring with provider.EventCounter.
type countingCQ struct {
	provider.CQ
	events int
}

func (r *countingCQ) Event() { r.events++ }

// TestEventCounter checks that Wait tells a driver with
// provider.EventCounter of every completion event it reads for the CQ,
// and that a CQ without it still counts its events.
// The channel is a pipe the test writes the events into.
func TestEventCounter(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer cmdR.Close()
	core, err := verbs.NewContext("fake0", cmdW, abi.RDMA_DRIVER_UNKNOWN)
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close()
	ch := &Channel{core: core, file: r, ev: verbs.EventFile{File: r}}

	ring := &countingCQ{}
	counting := &CQ{core: core, ring: ring}
	counting.id = core.Add(counting, func() {})
	plain := &CQ{core: core, ring: struct{ provider.CQ }{}} // no Event
	plain.id = core.Add(plain, func() {})

	send := func(id uint64) {
		var b [8]byte
		binary.NativeEndian.PutUint64(b[:], id)
		if _, err := w.Write(b[:]); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []*CQ{counting, plain, counting, counting} {
		send(c.id)
		got, err := ch.Wait(context.Background())
		if err != nil || got != c {
			t.Fatalf("Wait = %p, %v; want %p", got, err, c)
		}
	}
	if ring.events != 3 {
		t.Errorf("Event called %d times, want 3", ring.events)
	}
	if counting.Events() != 3 || plain.Events() != 1 {
		t.Errorf("Events = %d, %d; want 3, 1", counting.Events(), plain.Events())
	}
}

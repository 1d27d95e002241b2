package twohost_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// The fault tests stream messages from a to b over one connection: a
// keeps window sends in flight, b keeps receives posted and checks every
// message against the pattern of its sequence number (RC delivers in
// order).

const (
	msgSize = 4096 // four packets at rxe's MTU of 1024
	window  = 16
)

// streamResult is what the sender saw.
type streamResult struct {
	completed int       // successful send completions
	errWC     cq.WC     // the first failed completion, if any
	lastOK    time.Time // the last successful completion
	errAt     time.Time // when the failed completion was polled
}

// sendStream sends n messages, window at a time, until all complete or
// one fails; the receiver has said it is ready.
func sendStream(p *side, id *rdmacm.ID, n int) streamResult {
	t := p.t
	t.Helper()
	buf, m := memory(t, id.PD(), window*msgSize)
	ctx := ctxT(t, 5*time.Minute)
	var r streamResult
	posted := 0
	post := func() {
		slot := posted % window
		pattern(buf[slot*msgSize:(slot+1)*msgSize], posted)
		if err := id.PostSend(uint64(posted), m, slot*msgSize, msgSize, uverbs.SendSignaled); err != nil {
			t.Fatalf("guest %s: post send %d: %v", p.Name, posted, err)
		}
		posted++
	}
	for posted < min(n, window) {
		post()
	}
	for r.completed < n {
		wc, err := id.GetSendComp(ctx)
		if err != nil {
			t.Fatalf("guest %s: waiting for send %d: %v", p.Name, r.completed, err)
		}
		if wc.Status != cq.Success {
			r.errWC, r.errAt = wc, time.Now()
			return r
		}
		if wc.ID != uint64(r.completed) {
			t.Fatalf("guest %s: completion of send %d, want %d", p.Name, wc.ID, r.completed)
		}
		r.completed++
		r.lastOK = time.Now()
		if posted < n {
			post()
		}
	}
	return r
}

// recvStream receives and checks n messages; after each, progress gets
// the count so far and may stop the stream by returning false.
func recvStream(p *side, id *rdmacm.ID, n int, progress func(got int) bool) int {
	t := p.t
	t.Helper()
	const slots = 2 * window
	buf, m := memory(t, id.PD(), slots*msgSize)
	ctx := ctxT(t, 5*time.Minute)
	for i := range min(n, slots) {
		if err := id.PostRecv(uint64(i), m, i*msgSize, msgSize); err != nil {
			t.Fatal(err)
		}
	}
	p.send("ready", "")
	want := make([]byte, msgSize)
	for got := 0; got < n; {
		wc, err := id.GetRecvComp(ctx)
		if err != nil {
			t.Fatalf("guest %s: waiting for message %d: %v", p.Name, got, err)
		}
		if wc.Status != cq.Success || wc.ID != uint64(got) || wc.ByteLen != msgSize {
			t.Fatalf("guest %s: message %d: completion %+v", p.Name, got, wc)
		}
		slot := got % slots
		pattern(want, got)
		if !bytes.Equal(buf[slot*msgSize:(slot+1)*msgSize], want) {
			t.Fatalf("guest %s: message %d differs from what guest %s sent", p.Name, got, p.PeerName)
		}
		if next := got + slots; next < n {
			if err := id.PostRecv(uint64(next), m, slot*msgSize, msgSize); err != nil {
				t.Fatal(err)
			}
		}
		got++
		if progress != nil && !progress(got) {
			return got
		}
	}
	return n
}

// mark prints a mark for the host to time on its clock (see
// plan.MarkPrefix in hack/vm).
func (p *side) mark(name, format string, args ...any) {
	fmt.Printf("%s%s %s\n", os.Getenv("PURERDMA_PAIR_MARK"), name, fmt.Sprintf(format, args...))
}

// counters reads the rxe device's hardware counters (retransmissions,
// sequence errors...).
func counters(dev string) map[string]int64 {
	files, _ := filepath.Glob(filepath.Join("/sys/class/infiniband", dev, "ports/1/hw_counters/*"))
	c := map[string]int64{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
			c[filepath.Base(f)] = v
		}
	}
	return c
}

// counterDiff names the counters that changed between before and after.
func counterDiff(before, after map[string]int64) string {
	var out []string
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out = append(out, fmt.Sprintf("%s+%d", k, d))
		}
	}
	if len(out) == 0 {
		return "none"
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

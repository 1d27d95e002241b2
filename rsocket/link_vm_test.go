//go:build linux

package rsocket_test

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/rtnl"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rsocket"
	"github.com/purerdma/purerdma/uverbs"
)

// counters is rxe's port counters as one line, for a stalled transfer's
// report: whether requests are still retried, RNR-NAKed or sent at all.
func counters(dev string) string {
	cs, err := uverbs.Device{Name: dev}.PortCounters(1)
	if err != nil {
		return err.Error()
	}
	s := ""
	for _, c := range cs {
		if c.Value != 0 {
			s += fmt.Sprintf(" %s=%d", c.Name, c.Value)
		}
	}
	return s
}

// TestLinkDown sets rxe0's veth down while the client writes and the
// server reads: the blocked Write fails within linkFailBound, nearly
// always with EIO wrapping the failed completion (rxe fails the next
// request it transmits on a down link with LOC_QP_OP_ERR and flushes the
// rest), and in about one run of 30 with ETIMEDOUT from the user timeout:
// then a request whose acknowledgement was lost is retransmitted once
// (completer_retry_err 1) and neither a packet nor an error follows, and
// with rsocket.c's retry_count 7 rxe never gives up (docs/rsocket.md). The
// Conns close only once the link is up again: Close disconnects, and a
// DREQ sent while rxe's link is down breaks rxe0's connection manager for
// the rest of the boot (docs/kernel-notes.md). Then a new connection
// works.
//
// rxe only: siw moves every QP to ERROR at NETDEV_GOING_DOWN and drops
// the connections (DISCONNECTED, an ECONNRESET here), which TestPeerKilled
// already covers for this package.
func TestLinkDown(t *testing.T) {
	const linkFailBound = 10 * time.Second
	testenv.RequireVM(t)
	var d testenv.Dev
	for _, dev := range testenv.Devices(t) {
		if dev.Driver == "rxe" {
			d = dev
		}
	}
	if d.Name == "" {
		t.Fatal("no rxe device in the VM")
	}
	testenv.CheckLeaks(t)
	c, s := pair(t, d, &rsocket.Options{KeepAlive: 100 * time.Millisecond, UserTimeout: 2 * time.Second})
	// Registered after pair's cleanup, so it runs first: the Conns close
	// with the link up, and later tests have the device.
	t.Cleanup(func() {
		if err := rtnl.SetLink(d.Netdev, true); err != nil {
			t.Errorf("%s up: %v", d.Netdev, err)
		}
	})
	type result struct {
		n   int64
		err error
		at  time.Time
	}
	wres, rres := make(chan result, 1), make(chan result, 1)
	// Bytes written and read so far: when an op does not fail, they tell
	// a stuck transfer from one still moving (both ends share rxe0).
	var written, read atomic.Int64
	go func() {
		buf := pattern(64<<10, 1)
		for {
			m, err := c.Write(buf)
			written.Add(int64(m))
			if err != nil {
				wres <- result{written.Load(), err, time.Now()}
				return
			}
		}
	}()
	go func() {
		buf := make([]byte, 64<<10)
		for {
			m, err := s.Read(buf)
			read.Add(int64(m))
			if err != nil {
				rres <- result{read.Load(), err, time.Now()}
				return
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	down := time.Now()
	if err := rtnl.SetLink(d.Netdev, false); err != nil {
		t.Fatalf("%s down: %v", d.Netdev, err)
	}
	w0, r0 := written.Load(), read.Load()
	c0 := counters(d.Name)
	stuck := func() string {
		c1 := counters(d.Name)
		time.Sleep(2 * time.Second)
		return fmt.Sprintf("written %d, read %d at link down; %d, %d now; counters at link down:%s; at the stall:%s; 2 s later:%s",
			w0, r0, written.Load(), read.Load(), c0, c1, counters(d.Name))
	}
	var w result
	select {
	case w = <-wres:
	case <-time.After(linkFailBound):
		t.Fatalf("client Write still blocked %v after link down (%s)", linkFailBound, stuck())
	}
	// A failed send is EIO; on 6.12 the QP's flushed receive is
	// sometimes polled first (ECONNRESET); both wrap the completion.
	linkErr := func(err error) bool {
		var ce *cq.CompletionError
		return (errors.Is(err, syscall.EIO) || errors.Is(err, syscall.ECONNRESET)) && errors.As(err, &ce) ||
			errors.Is(err, syscall.ETIMEDOUT)
	}
	if !linkErr(w.err) {
		t.Errorf("client Write after link down: %v; want EIO or ECONNRESET wrapping a *cq.CompletionError, or ETIMEDOUT", w.err)
	}
	t.Logf("client Write failed %v after link down (%d bytes moved): %v", w.at.Sub(down), w.n, w.err)

	// The server's Read fails when its next send (a credit update, or the
	// keepalive 100 ms later) fails the same way, or by the user timeout
	// when that send is the one stuck; both within linkFailBound.
	var r result
	select {
	case r = <-rres:
	case <-time.After(linkFailBound - time.Since(down)):
		t.Fatalf("server Read still blocked %v after link down (%s)", linkFailBound, stuck())
	}
	if !linkErr(r.err) {
		t.Errorf("server Read after link down: %v; want EIO or ECONNRESET wrapping a *cq.CompletionError, or ETIMEDOUT", r.err)
	}
	t.Logf("server Read failed %v after link down: %v", r.at.Sub(down), r.err)
	if err := rtnl.SetLink(d.Netdev, true); err != nil {
		t.Fatalf("%s up: %v", d.Netdev, err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("client Close after the link failure: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("server Close after the link failure: %v", err)
	}
	// A new connection after link up carries data.
	c2, s2 := pair(t, d, nil)
	want := pattern(1<<20, 2)
	go c2.Write(want)
	got := make([]byte, len(want))
	s2.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(s2, got); err != nil || string(got) != string(want) {
		t.Fatalf("new connection after link up: %v", err)
	}
}

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
)

// setLink sets the network device name up or down.
func setLink(name string, up bool) error {
	c, err := rtnl.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	if up {
		return c.SetUp(name)
	}
	return c.SetDown(name)
}

// TestLinkDown sets rxe0's veth down while the client writes and the
// server reads: the blocked Write fails with EIO wrapping the failed
// completion within linkFailBound (rxe fails the next request it
// transmits on a down link with LOC_QP_OP_ERR and flushes the rest). The
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
	c, s := pair(t, d, &rsocket.Options{KeepAlive: 100 * time.Millisecond})
	// Registered after pair's cleanup, so it runs first: the Conns close
	// with the link up, and later tests have the device.
	t.Cleanup(func() {
		if err := setLink(d.Netdev, true); err != nil {
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
	if err := setLink(d.Netdev, false); err != nil {
		t.Fatalf("%s down: %v", d.Netdev, err)
	}
	w0, r0 := written.Load(), read.Load()
	stuck := func() string {
		return fmt.Sprintf("written %d, read %d at link down; %d, %d now", w0, r0, written.Load(), read.Load())
	}
	var w result
	select {
	case w = <-wres:
	case <-time.After(linkFailBound):
		t.Fatalf("client Write still blocked %v after link down (%s)", linkFailBound, stuck())
	}
	var ce *cq.CompletionError
	if !errors.Is(w.err, syscall.EIO) || !errors.As(w.err, &ce) {
		t.Errorf("client Write after link down: %v; want EIO wrapping a *cq.CompletionError", w.err)
	}
	t.Logf("client Write failed %v after link down (%d bytes moved): %v", w.at.Sub(down), w.n, w.err)

	// The server's Read fails when its next send (a credit update, or the
	// keepalive 100 ms later) fails the same way: 2-108 ms in all but one
	// of about 45 runs. In that one (Linux 6.1) it still waited 10 s
	// later; we did not trace why (its keepalive needs a free control slot, and
	// rxe retries requests to a peer QP in ERR forever with rsocket.c's
	// retry_count 7, docs/kernel-notes.md). Then the client's Close after
	// link up disconnects, and the server's DISCONNECTED ends its Read
	// with ECONNRESET, which this test requires within linkFailBound.
	var r result
	readDone := false
	select {
	case r = <-rres:
		readDone = true
	case <-time.After(time.Second):
	}
	if err := setLink(d.Netdev, true); err != nil {
		t.Fatalf("%s up: %v", d.Netdev, err)
	}
	up := time.Now()
	if err := c.Close(); err != nil {
		t.Errorf("client Close after the link failure: %v", err)
	}
	if !readDone {
		select {
		case r = <-rres:
		case <-time.After(linkFailBound):
			t.Fatalf("server Read still blocked %v after the link came up and the client closed (%s)", linkFailBound, stuck())
		}
		if !errors.Is(r.err, syscall.ECONNRESET) {
			t.Errorf("server Read after the client's Close: %v; want ECONNRESET", r.err)
		}
		t.Logf("server Read still waiting 1s after link down (%s); failed %v after link up and the client's Close: %v", stuck(), r.at.Sub(up), r.err)
	} else {
		if !errors.Is(r.err, syscall.EIO) || !errors.As(r.err, &ce) {
			t.Errorf("server Read after link down: %v; want EIO wrapping a *cq.CompletionError", r.err)
		}
		t.Logf("server Read failed %v after link down: %v", r.at.Sub(down), r.err)
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

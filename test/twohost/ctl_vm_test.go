package twohost_test

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
)

// The two sides of a test talk over a TCP control connection on the wire,
// opened once per test binary: a listens, b connects. Every test starts
// with both sides naming it (a barrier that also catches the two binaries
// running different tests), exchanges small key/value lines while it
// runs, and ends with both sides saying whether they passed. Every read
// has a deadline, so a side whose peer is gone fails instead of hanging.

const ctlPort = "7470"

// ctlWait bounds every wait for the peer. Guests run under emulation on
// a shared host: generous, but bounded.
const ctlWait = 3 * time.Minute

var ctl *ctlConn

type ctlConn struct {
	c         net.Conn
	r         *bufio.Reader
	broken    error
	peerEnded bool // the peer's end line of the running test was read
}

func TestMain(m *testing.M) {
	if testenv.InPair() {
		var err error
		if ctl, err = dialCtl(); err != nil {
			fmt.Fprintf(os.Stderr, "twohost: control connection to %s: %v\n", os.Getenv("PURERDMA_PAIR_PEER_NAME"), err)
			os.Exit(1)
		}
		fmt.Printf("twohost: guest %s (%s, %s) has the control connection to guest %s (%s)\n",
			os.Getenv("PURERDMA_PAIR"), os.Getenv("PURERDMA_PAIR_ROLE"), os.Getenv("PURERDMA_PAIR_ADDR"),
			os.Getenv("PURERDMA_PAIR_PEER_NAME"), os.Getenv("PURERDMA_PAIR_PEER"))
	}
	code := testenv.Main(m)
	if ctl != nil {
		ctl.c.Close()
	}
	os.Exit(code)
}

func dialCtl() (*ctlConn, error) {
	var (
		c   net.Conn
		err error
	)
	if os.Getenv("PURERDMA_PAIR_ROLE") == "server" {
		var l net.Listener
		l, err = net.Listen("tcp", net.JoinHostPort(os.Getenv("PURERDMA_PAIR_ADDR"), ctlPort))
		if err != nil {
			return nil, err
		}
		defer l.Close()
		l.(*net.TCPListener).SetDeadline(time.Now().Add(ctlWait))
		c, err = l.Accept()
	} else {
		// The peer guest may still be booting.
		deadline := time.Now().Add(ctlWait)
		for {
			c, err = net.DialTimeout("tcp", net.JoinHostPort(os.Getenv("PURERDMA_PAIR_PEER"), ctlPort), 10*time.Second)
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if err != nil {
		return nil, err
	}
	return &ctlConn{c: c, r: bufio.NewReader(c)}, nil
}

func (c *ctlConn) send(key, val string) error {
	if c.broken != nil {
		return c.broken
	}
	c.c.SetWriteDeadline(time.Now().Add(ctlWait))
	if _, err := fmt.Fprintf(c.c, "%s %s\n", key, strconv.Quote(val)); err != nil {
		c.broken = fmt.Errorf("control connection: %w", err)
	}
	return c.broken
}

func (c *ctlConn) recv() (key, val string, err error) {
	if c.broken != nil {
		return "", "", c.broken
	}
	c.c.SetReadDeadline(time.Now().Add(ctlWait))
	line, err := c.r.ReadString('\n')
	if err != nil {
		c.broken = fmt.Errorf("control connection: %w", err)
		return "", "", c.broken
	}
	key, q, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
	if val, err = strconv.Unquote(q); err != nil {
		c.broken = fmt.Errorf("control connection: bad line %q", line)
		return "", "", c.broken
	}
	return key, val, nil
}

// side is one side of a running cross-host test.
type side struct {
	testenv.Pair
	t        *testing.T
	peerGone bool // the peer guest was powered off
}

var errPeerEnded = errors.New("the peer ended the test")

// begin starts the test on this side: it waits for the peer to start the
// same test, and at the end of the test tells it the outcome and waits
// for the peer's.
func begin(t *testing.T) *side {
	t.Helper()
	s := &side{Pair: testenv.RequirePair(t), t: t}
	if ctl == nil {
		t.Fatal("no control connection to the peer guest")
	}
	ctl.peerEnded = false
	s.send("begin", t.Name())
	if got := s.recv("begin"); got != t.Name() {
		t.Fatalf("guest %s runs %s, guest %s runs %s", s.Name, t.Name(), s.PeerName, got)
	}
	t.Cleanup(s.end)
	return s
}

func (s *side) end() {
	if s.peerGone {
		return
	}
	outcome := "ok"
	if s.t.Failed() {
		outcome = "failed"
	}
	if err := ctl.send("end", outcome); err != nil {
		s.t.Errorf("telling guest %s the outcome: %v", s.PeerName, err)
		return
	}
	if !ctl.peerEnded {
		for {
			key, val, err := ctl.recv()
			if err != nil {
				s.t.Errorf("waiting for guest %s to end %s: %v", s.PeerName, s.t.Name(), err)
				return
			}
			if key == "end" {
				outcome = val
				break
			}
			// Messages the test did not read, as when it failed early.
		}
	}
	if outcome != "ok" {
		s.t.Logf("guest %s's side of %s failed too; see its output", s.PeerName, s.t.Name())
	}
}

// sub is this side in a subtest of its test, which shares the test's
// begin and end.
func (s *side) sub(t *testing.T) *side {
	c := *s
	c.t = t
	return &c
}

// send sends a key/value line to the peer.
func (s *side) send(key, val string) {
	s.t.Helper()
	if err := ctl.send(key, val); err != nil {
		s.t.Fatalf("guest %s: sending %s to guest %s: %v", s.Name, key, s.PeerName, err)
	}
}

// recv waits for the peer's line with key, and fails the test if the
// peer ended the test or sent something else.
func (s *side) recv(key string) string {
	s.t.Helper()
	got, val, err := ctl.recv()
	switch {
	case err != nil:
		s.t.Fatalf("guest %s: waiting for %s from guest %s: %v", s.Name, key, s.PeerName, err)
	case got == "end":
		ctl.peerEnded = true
		s.t.Fatalf("guest %s: waiting for %s: %v (%s)", s.Name, key, errPeerEnded, val)
	case got != key:
		s.t.Fatalf("guest %s: waiting for %s, guest %s sent %s %q", s.Name, key, s.PeerName, got, val)
	}
	return val
}

// recvAsync waits for the peer's line with key on another goroutine; the
// test must not use the control connection until it has the value.
func (s *side) recvAsync(key string) <-chan ctlResult {
	ch := make(chan ctlResult, 1)
	go func() {
		got, val, err := ctl.recv()
		switch {
		case err != nil:
		case got == "end":
			ctl.peerEnded = true
			err = fmt.Errorf("%w (%s)", errPeerEnded, val)
		case got != key:
			err = fmt.Errorf("guest %s sent %s %q, want %s", s.PeerName, got, val, key)
		}
		ch <- ctlResult{val, err}
	}()
	return ch
}

type ctlResult struct {
	val string
	err error
}

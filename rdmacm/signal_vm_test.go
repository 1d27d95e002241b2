//go:build linux

package rdmacm_test

import (
	"context"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/netport"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// signalThreads sends SIGURG, the signal the Go runtime preempts
// goroutines with, to every thread of the process, over and over until
// stop is closed. The runtime ignores a SIGURG it did not ask for.
func signalThreads(stop <-chan struct{}) {
	pid := os.Getpid()
	for {
		select {
		case <-stop:
			return
		default:
		}
		tasks, _ := os.ReadDir("/proc/self/task")
		for _, task := range tasks {
			if tid, err := strconv.Atoi(task.Name()); err == nil {
				unix.Tgkill(pid, tid, unix.SIGURG)
			}
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// TestConnectUnderSignals connects over and over while every thread of
// the process keeps receiving signals, as a busy Go program's threads do
// (the runtime's preemption signal). On iWARP (siw) the kernel opens the
// TCP connection inside the CONNECT command (siw_connect, a blocking
// kernel connect): a signal that arrives then makes it give up the
// connection it may already have made, and a handler installed with
// SA_RESTART (the runtime's) then restarts the command, which fails with
// EADDRNOTAVAIL since the closing connection still holds the address and
// port; worse, the close reaches the listener before siw has accepted the
// connection, and that kills a siw listener (docs/kernel-notes.md, siw).
// Connect therefore keeps signals away from the thread it connects on.
func TestConnectUnderSignals(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		l, addr := listen(t, d, rdmacm.TCP)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); signalThreads(stop) }()
		defer func() { close(stop); wg.Wait() }()
		const n = 60
		failed := 0
		for i := range n {
			if err := connectOnce(ctx, l, addr); err != nil {
				t.Errorf("connection %d: %v", i, err)
				if failed++; failed == 3 {
					break
				}
			}
		}
		if d.Driver == "siw" && !netport.Listening(int(addr.Port())) {
			t.Errorf("the listener's port %d no longer listens", addr.Port())
		}
	})
}

// connectOnce makes one connection to the listener l at addr, and closes
// it and everything it made.
func connectOnce(ctx context.Context, l *rdmacm.ID, addr netip.AddrPort) error {
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		return err
	}
	defer ch.Close()
	c, err := ch.CreateID(rdmacm.TCP)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Resolve(ctx, addr, 2*time.Second); err != nil {
		return err
	}
	if err := c.CreateQP(nil, uverbs.QPInit{Cap: qpCap}); err != nil {
		return err
	}
	if err := c.Connect(&rdmacm.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7}); err != nil {
		return err
	}
	req, err := l.WaitEvent(ctx, rdmacm.EventConnectRequest)
	if err != nil {
		return err
	}
	s := req.ID
	defer s.Close()
	if err := s.CreateQP(nil, uverbs.QPInit{Cap: qpCap}); err != nil {
		return err
	}
	if err := s.Accept(&rdmacm.ConnParam{ResponderResources: 1, InitiatorDepth: 1}); err != nil {
		return err
	}
	if _, err := c.WaitEvent(ctx, rdmacm.EventEstablished); err != nil {
		return err
	}
	if _, err := s.WaitEvent(ctx, rdmacm.EventEstablished); err != nil {
		return err
	}
	if err := c.Disconnect(); err != nil {
		return err
	}
	if _, err := s.WaitEvent(ctx, rdmacm.EventDisconnected); err != nil {
		return err
	}
	if err := s.Disconnect(); err != nil {
		return err
	}
	_, err = c.WaitEvent(ctx, rdmacm.EventDisconnected)
	return err
}

package rpma_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/rpmatest"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/rpma"
)

// peerEnv, set to a server's address, makes the test binary a client
// that connects to it, says "established" and waits to be killed.
const peerEnv = "PURERDMA_RPMA_PEER"

// runPeer is the killable client's main: an rdmacm client, which an rpma
// server accepts as any other. It closes nothing: the kernel cleans up
// after the kill.
func runPeer(addr string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := rdmacm.Dial(ctx, addr); err != nil {
		fmt.Fprintln(os.Stderr, "rpma peer:", err)
		return 1
	}
	fmt.Println("established")
	<-ctx.Done()
	return 0
}

// startPeer starts a killable client of addr in a child process, and
// returns the function that kills it once it said it is connected. The
// child's output is read in the caller's goroutine, so that goroutine
// counts see none of exec's.
func startPeer(t *testing.T, addr string) (ready func() error, kill func()) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), peerEnv+"="+addr)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready = func() error {
		// The child gives up on its own after a minute: the read ends.
		line, err := bufio.NewReader(out).ReadString('\n')
		if line != "established\n" {
			return fmt.Errorf("the peer said %q (%v), want established", line, err)
		}
		return nil
	}
	return ready, func() { cmd.Process.Signal(syscall.SIGKILL) }
}

// TestWaitPeerGone blocks a server in CQ.Wait or Conn.Wait and has its
// peer disappear: killed in a child process (its kernel disconnects it),
// or disconnecting. The wait must end with an error of code
// CodeNoCompletion matching rdmacm.ErrDisconnected and ECONNRESET within
// the hang guard, leave no goroutine behind, and leave ConnClosed to
// NextEvent.
func TestWaitPeerGone(t *testing.T) {
	waits := []struct {
		name   string
		shared bool
		wait   func(ctx context.Context, c *rpma.Conn) error
	}{
		{"CQ.Wait", false, func(ctx context.Context, c *rpma.Conn) error { return c.CQ().Wait(ctx) }},
		{"Conn.Wait", true, func(ctx context.Context, c *rpma.Conn) error {
			_, _, err := c.Wait(ctx)
			return err
		}},
	}
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		for _, how := range []string{"killed", "disconnect"} {
			for _, w := range waits {
				t.Run(how+"/"+w.name, func(t *testing.T) {
					testenv.CheckLeaks(t)
					waitPeerGone(t, d, how == "killed", w.shared, w.wait)
				})
			}
		}
	})
}

func waitPeerGone(t *testing.T, d testenv.Dev, kill, shared bool, wait func(context.Context, *rpma.Conn) error) {
	ctx := ctxT(t)
	addr := netip.MustParseAddr(d.Addr)
	server := rpmatest.NewSide(t, ctx, addr, rpma.ContextLocal, 4096, rpma.UsageRecv)
	ep, err := server.Peer.Listen(netip.AddrPortFrom(addr, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	epAddr, err := ep.Addr()
	if err != nil {
		t.Fatal(err)
	}
	cfg := rpma.ConnConfig{SharedCompChannel: shared}
	var conn *rpma.Conn
	var leave func()
	if kill {
		ready, killPeer := startPeer(t, epAddr.String())
		req, err := ep.NextConnRequest(ctx, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		if conn, err = req.Connect(nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		if err := rpmatest.WantEvent(ctx, conn, rpma.ConnEstablished); err != nil {
			t.Fatal(err)
		}
		if err := ready(); err != nil {
			t.Fatal(err)
		}
		leave = killPeer
	} else {
		client := rpmatest.NewSide(t, ctx, addr, rpma.ContextRemote, 4096, rpma.UsageSend)
		c, s, err := rpmatest.Connect(ctx, ep, client.Peer, &cfg, &cfg, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		t.Cleanup(func() { s.Close() })
		conn = s
		leave = func() {
			if err := c.Disconnect(); err != nil {
				t.Errorf("client disconnect: %v", err)
			}
		}
	}

	before := runtime.NumGoroutine()
	time.AfterFunc(200*time.Millisecond, leave)
	// The bound is a hang guard, not a timing requirement.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	err = wait(wctx, conn)
	for err == nil && time.Since(start) < 10*time.Second {
		// A wake-up may find no completion (and the connection up yet).
		err = wait(wctx, conn)
	}
	if !errors.Is(err, rdmacm.ErrDisconnected) || !errors.Is(err, syscall.ECONNRESET) || rpma.Code(err) != rpma.CodeNoCompletion {
		t.Fatalf("the wait ended after %v with %v (code %d), want one of code %d matching rdmacm.ErrDisconnected and ECONNRESET",
			time.Since(start), err, rpma.Code(err), rpma.CodeNoCompletion)
	}
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(time.Second); n > before && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	if n > before {
		t.Errorf("%d goroutines after the wait, %d before: the wait left some behind", n, before)
	}
	if err := rpmatest.WantEvent(ctx, conn, rpma.ConnClosed); err != nil {
		t.Errorf("NextEvent after the wait: %v", err)
	}
	if err := conn.Disconnect(); err != nil {
		t.Error(err)
	}
}

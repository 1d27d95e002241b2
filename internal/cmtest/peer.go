package cmtest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rdmacm"
)

// peerEnv, set to a server's address, makes a test binary whose TestMain
// calls PeerMain the killable client StartPeer starts.
const peerEnv = "PURERDMA_CM_PEER"

// PeerMain, called first in a TestMain, makes this binary the killable
// client when StartPeer started it: it connects to the server with
// rdmacm.Dial (an rpma server accepts it as any other client), says
// "established" and waits to be killed, then exits. It closes nothing:
// the kernel cleans up after the kill.
func PeerMain() {
	addr := os.Getenv(peerEnv)
	if addr == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := rdmacm.Dial(ctx, addr); err != nil {
		fmt.Fprintln(os.Stderr, "peer:", err)
		os.Exit(1)
	}
	fmt.Println("established")
	<-ctx.Done()
	os.Exit(0)
}

// StartPeer starts a killable client of addr in a child process (this
// test binary again; see PeerMain). ready returns once the child said it
// is connected, reading its output in the caller's goroutine, so that
// goroutine counts see none of exec's; kill sends it SIGKILL.
func StartPeer(t testing.TB, addr string) (ready func() error, kill func()) {
	t.Helper()
	cmd, out := testenv.StartSelf(t, peerEnv+"="+addr)
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

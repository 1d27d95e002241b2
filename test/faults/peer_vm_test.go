package faults_test

import (
	"bufio"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/rpmatest"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rpma"
)

// peerEnv, set to a device address, makes the test binary a server on
// that address instead of running tests: it prints "port N" once it
// listens, accepts one connection with its region's descriptor as
// private data, prints "established" and waits to be killed.
const peerEnv = "PURERDMA_FAULTS_PEER"

// runPeer is the killable peer's main.
func runPeer(addr string) int {
	if err := servePeer(addr); err != nil {
		fmt.Fprintln(os.Stderr, "peer:", err)
		return 1
	}
	return 0
}

func servePeer(addr string) error {
	ctx := context.Background()
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return err
	}
	uctx, err := rpma.ContextByAddr(ctx, ip, rpma.ContextLocal)
	if err != nil {
		return err
	}
	peer, err := rpma.NewPeer(uctx)
	if err != nil {
		return err
	}
	buf, err := mr.Alloc(regionSize)
	if err != nil {
		return err
	}
	copy(buf, serverText)
	m, err := peer.RegisterMR(buf, usageServer)
	if err != nil {
		return err
	}
	ep, err := peer.Listen(netip.AddrPortFrom(ip, 0))
	if err != nil {
		return err
	}
	la, err := ep.Addr()
	if err != nil {
		return err
	}
	fmt.Printf("port %d\n", la.Port())
	req, err := ep.NextConnRequest(ctx, nil)
	if err != nil {
		return err
	}
	c, err := req.Connect(m.Descriptor())
	if err != nil {
		return err
	}
	if err := rpmatest.WantEvent(ctx, c, rpma.ConnEstablished); err != nil {
		return err
	}
	fmt.Println("established")
	// Nothing is closed: the test kills this process, and the kernel
	// cleans up after it.
	time.Sleep(time.Hour)
	return nil
}

// killablePeer starts the test binary as a peer on d and returns it with
// the address it listens on. The peer is killed at the end of the test
// if it still runs.
func killablePeer(t *testing.T, d testenv.Dev) (*exec.Cmd, netip.AddrPort, *bufio.Scanner) {
	t.Helper()
	cmd, out := testenv.StartSelf(t, peerEnv+"="+d.Addr)
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatalf("peer ended before listening: %v", lines.Err())
	}
	port, err := strconv.Atoi(strings.TrimPrefix(lines.Text(), "port "))
	if err != nil {
		t.Fatalf("peer said %q", lines.Text())
	}
	return cmd, netip.AddrPortFrom(netip.MustParseAddr(d.Addr), uint16(port)), lines
}

// TestPeerKilled kills the server process (SIGKILL) in the middle of a
// stream of reads and writes. The kernel closes the dead process's
// rdma_cm IDs, which disconnects them: the client sees ConnClosed (a
// DREQ on rxe, the TCP connection's close on siw), disconnects, and
// every operation it had in flight completes, those after the death
// with an error. Then it makes a new connection.
func TestPeerKilled(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		cmd, addr, lines := killablePeer(t, d)
		client := newSide(t, d, rpma.ContextRemote, usageClient)
		c, err := rpmatest.Dial(ctxFor(t, 10*time.Second), client.peer, addr, streamConfig(), nil)
		if err != nil {
			t.Fatal(err)
		}
		closeConn := sync.OnceValue(c.Close)
		t.Cleanup(func() { closeConn() })
		if !lines.Scan() || lines.Text() != "established" {
			t.Fatalf("peer said %q, %v", lines.Text(), lines.Err())
		}
		remote, err := rpma.RemoteMRFromDescriptor(c.PrivateData())
		if err != nil {
			t.Fatal(err)
		}
		o := stream(t, c, client.mr, remote, func() {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
		}, disconnect(t, c), strands(d), 60*time.Second)
		t.Logf("%s: %v", d.Name, o)
		if o.event != rpma.ConnClosed {
			t.Errorf("event %v, want %v", o.event, rpma.ConnClosed)
		}
		if err := closeConn(); err != nil {
			t.Errorf("conn close: %v", err)
		}
		reconnect(t, d)
	})
}

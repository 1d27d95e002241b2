// Package kernelbugs holds the smallest reproductions of kernel defects
// that purerdma's tests met and work around (docs/kernel-notes.md). Each
// test asserts what a correct kernel does, so it fails while the kernel it
// runs on has the defect: make kernel-bugs runs them (hack/vm runs this
// package only when named), and a kernel that passes one tells us its
// workaround can go.
package kernelbugs

import (
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/cmtest"
	"github.com/purerdma/purerdma/internal/netport"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// resets is how many plain TCP connections TestSIWListenerReset opens to
// a siw listener and resets at once; the listener died after 40 to 90 of
// them on 6.1 and 6.12.
const resets = 300

// resetConnections connects to addr over plain TCP and resets each
// connection at once (SO_LINGER 0), as a client that gives up, a port
// scanner or an aborted rdma_connect does; it stops at the first refusal.
func resetConnections(t *testing.T, addr string) (refusedAt int) {
	for i := range resets {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			t.Logf("TCP connection %d to the listener: %v", i, err)
			return i
		}
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
	return -1
}

// kernelLog returns the guest kernel's log lines that mention list or
// refcount corruption, which destroying a dead siw listener may cause.
func kernelLog(t *testing.T) []string {
	buf := make([]byte, 1<<20)
	n, err := unix.Klogctl(unix.SYSLOG_ACTION_READ_ALL, buf)
	if err != nil {
		t.Logf("kernel log: %v", err)
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(buf[:n]), "\n") {
		if strings.Contains(l, "list_del corruption") || strings.Contains(l, "refcount_t") || strings.Contains(l, "siw_destroy_listen") {
			out = append(out, l)
		}
	}
	return out
}

// TestSIWListenerReset: a siw listener must keep listening when clients
// reset TCP connections to it before siw accepts them. On Linux 6.1 and
// 6.12 it does not: siw's listening socket hands its state-change upcall
// to each child socket, a child reset before siw's accept work has taken
// it queues PEER_CLOSE on the listener's endpoint, and that work releases
// the listening socket and frees the endpoint without taking it off the
// ID's listen list (drivers/infiniband/sw/siw/siw_cm.c:
// siw_cm_llp_state_change, siw_cm_work_handler). The listener's port then
// refuses every connection while its rdma_cm ID still exists, and
// destroying the ID (siw_destroy_listen → siw_drop_listeners) walks the
// freed endpoint: the 6.12 soak's "kernel BUG at lib/list_debug.c:54".
// The Go listener and librdmacm's (rping -s) fail alike.
func TestSIWListenerReset(t *testing.T) {
	d := siw(t)
	addr := netip.MustParseAddr(d.Addr)
	t.Run("go", func(t *testing.T) {
		_, la := cmtest.Listen(t, addr, rdmacm.TCP) // closed at the end of the subtest
		refused := resetConnections(t, la.String())
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		c := cmtest.Dial(t, ctx, la, rdmacm.TCP, uverbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}, time.Second)
		err := c.Connect(nil)
		if refused >= 0 || err != nil || !netport.Listening(int(la.Port())) {
			t.Errorf("after %d reset TCP connections: refused at connection %d, listening %v, rdma_connect: %v; want every connection accepted and rdma_connect to succeed",
				resets, refused, netport.Listening(int(la.Port())), err)
		}
	})
	t.Run("librdmacm", func(t *testing.T) {
		rping := testenv.CTool(t, "rping")
		port := strconv.Itoa(testenv.FreePort(t))
		srv := exec.Command(rping, "-s", "-a", d.Addr, "-p", port)
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		defer srv.Wait()
		defer srv.Process.Kill()
		n, _ := strconv.Atoi(port)
		for i := 0; !netport.Listening(n) && i < 200; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		refused := resetConnections(t, net.JoinHostPort(d.Addr, port))
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, rping, "-c", "-a", d.Addr, "-p", port, "-C", "1").CombinedOutput()
		if refused >= 0 || err != nil {
			t.Errorf("after %d reset TCP connections to rping -s: refused at connection %d; rping -c: %v: %s; want every connection accepted and the ping to pass",
				resets, refused, err, out)
		}
	})
	// Destroying the dead listeners (the subtests' cleanups) reads freed
	// memory; report what the kernel noticed.
	for _, l := range kernelLog(t) {
		t.Errorf("kernel: %s", l)
	}
}

func siw(t *testing.T) testenv.Dev {
	for _, d := range testenv.Devices(t) {
		if d.Driver == "siw" {
			return d
		}
	}
	t.Fatal("no siw device")
	return testenv.Dev{}
}

package rpmainterop_test

import (
	"context"
	"net/netip"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/test/rpmainterop"
)

// TestMain fails the binary if a test leaves RDMA objects or fds behind.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// port gives each device's C server a port of its own.
func port(d testenv.Dev) uint16 {
	if d.Driver == "siw" {
		return 7472
	}
	return 7471
}

// TestCServerGoClient: the Go client reads the C server's memory, writes
// and flushes it through the descriptor in the server's common_data.
func TestCServerGoClient(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		addr := netip.MustParseAddr(d.Addr)
		srv := rpmainterop.StartCPeer(t, "server", d.Addr, strconv.Itoa(int(port(d))))
		srv.WaitLine(t, "listening")
		rpmainterop.GoClient(t, ctx, addr, netip.AddrPortFrom(addr, port(d)), srv)
		line := srv.WaitLine(t, "server memory: ")
		srv.Wait(t)
		rpmainterop.CheckCServerMemory(t, line)
	})
}

// TestGoServerCClient: the C client reads the Go server's memory, writes
// and flushes it through the descriptor in the Go server's common_data.
func TestGoServerCClient(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s := rpmainterop.ListenGo(t, ctx, netip.MustParseAddr(d.Addr))
		cli := rpmainterop.StartCPeer(t, "client", d.Addr, strconv.Itoa(int(s.Port)))
		s.Serve(t, ctx, cli)
		cli.Wait(t)
		s.Check(t)
		rpmainterop.CheckCClient(t, cli.String())
	})
}

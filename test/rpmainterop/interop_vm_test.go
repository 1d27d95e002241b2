package rpmainterop_test

import (
	"context"
	"net/netip"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rpma"
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

// native says whether the kernel's d has RDMA FLUSH and ATOMIC WRITE:
// rxe since Linux 6.2, never siw nor a hardware device (no other driver
// of Linux 6.12 sets the capabilities). rpma's default peer then does both
// natively; Debian 12's C librpma does neither (see TestGoServerCClient).
func native(t *testing.T, d testenv.Dev) bool {
	return d.Driver == "rxe" && testenv.KernelAtLeast(6, 2)
}

// atomicOp is the completion opcode of an atomic write on d.
func atomicOp(t *testing.T, d testenv.Dev) cq.Opcode {
	if native(t, d) {
		return cq.OpAtomicWrite
	}
	return cq.OpRDMAWrite
}

// TestCServerGoClient: the Go client reads the C server's memory, writes,
// flushes and atomically writes it through the descriptor in the
// server's common_data. Its peer is FlushEmulated, which flushes a C
// librpma 1.2 server's memory on every kernel; its atomic write is native
// where the device has it.
func TestCServerGoClient(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		addr := netip.MustParseAddr(d.Addr)
		srv := rpmainterop.StartCPeer(t, "server", d.Addr, strconv.Itoa(int(port(d))))
		srv.WaitLine(t, "listening")
		res := rpmainterop.GoClient(t, ctx, addr, netip.AddrPortFrom(addr, port(d)), srv, rpma.PeerOptions{Flush: rpma.FlushEmulated})
		line := srv.WaitLine(t, "server memory: ")
		srv.Wait(t)
		if res.Flush.Status != cq.Success || res.Flush.Opcode != cq.OpRDMARead {
			t.Errorf("flush completion %+v, want an RDMA read's success", res.Flush)
		}
		if want := atomicOp(t, d); res.AtomicWrite.Opcode != want {
			t.Errorf("atomic write on Linux %s completed as %s, want %s", testenv.KernelRelease(), res.AtomicWrite.Opcode, want)
		}
		rpmainterop.CheckCServerMemory(t, line, true)
	})
}

// TestCServerGoClientNativeFlush is what FlushEmulated avoids: a Go
// client with the default peer flushes natively where it can, and C
// librpma 1.2 registered the server's memory without the FLUSH access
// flags (it has no native flush), so rxe's responder refuses the flush
// with a remote access error. librpma 1.3 would fail the same way against
// a 1.2 server. Without native flush the client flushes by reading, which
// works.
func TestCServerGoClientNativeFlush(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		addr := netip.MustParseAddr(d.Addr)
		srv := rpmainterop.StartCPeer(t, "server", d.Addr, strconv.Itoa(int(port(d))))
		srv.WaitLine(t, "listening")
		res := rpmainterop.GoClient(t, ctx, addr, netip.AddrPortFrom(addr, port(d)), srv, rpma.PeerOptions{})
		if !native(t, d) {
			if res.Flush.Status != cq.Success || res.Flush.Opcode != cq.OpRDMARead {
				t.Errorf("flush completion %+v, want an RDMA read's success", res.Flush)
			}
			line := srv.WaitLine(t, "server memory: ")
			srv.Wait(t)
			rpmainterop.CheckCServerMemory(t, line, true)
			return
		}
		if res.Flush.Status != cq.RemAccessErr {
			t.Errorf("native flush of C librpma 1.2's memory: %+v, want %s", res.Flush, cq.RemAccessErr)
		}
		// The write before the flush landed; the server's QP went to
		// the error state with the flush, so how it ends is its own
		// business.
		t.Logf("%s", srv)
	})
}

// TestGoServerCClient: the C client reads the Go server's memory, writes,
// flushes (by reading: librpma 1.2 has no native flush, and the Go
// server's region has READ_SRC) and atomically writes it through the
// descriptor in the Go server's common_data. The C client prints its
// atomic write's opcode and librpma's own decision.
//
// Debian 12's librpma0 1.2.0-1 was built without
// IBV_WR_ATOMIC_WRITE_SUPPORTED (its librpma.so.0 imports no
// ibv_qp_to_qp_ex and has no "ibv_wr_complete()" string, both of the
// native path): it emulates atomic write on every kernel,
// and says so even where the device reports native atomic write. The test
// pins that, so that a librpma that writes natively shows up here.
func TestGoServerCClient(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s := rpmainterop.ListenGo(t, ctx, netip.MustParseAddr(d.Addr))
		cli := rpmainterop.StartCPeer(t, "client", d.Addr, strconv.Itoa(int(s.Port)))
		s.Serve(t, ctx, cli)
		cli.Wait(t)
		s.Check(t)
		aw := rpmainterop.CheckCClient(t, cli.String())
		if !aw.Emulating || aw.Opcode != cq.OpRDMAWrite {
			t.Errorf("C librpma's atomic write on Linux %s (device native: %v): emulating %v, opcode %s; "+
				"want Debian 12's librpma 1.2.0-1: emulating, RDMA_WRITE",
				testenv.KernelRelease(), native(t, d), aw.Emulating, aw.Opcode)
		}
	})
}

//go:build linux

package rpma_test

import (
	"errors"
	"net/netip"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/rpmatest"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rpma"
	"github.com/purerdma/purerdma/uverbs"
)

// TestODPRegions runs rpma's reads and writes between regions registered
// with on-demand paging (PeerOptions.ODP = ODPAlways) that nothing has
// touched, again after the server dropped its pages with MADV_DONTNEED,
// and after MR.Advise prefetched them. A device that is not ODP capable
// refuses ODPAlways and answers Advise with ErrUnsupported
// (RPMA_E_NOSUPP), which matches errors.ErrUnsupported; the test checks
// that and skips. Transfers start at page boundaries, for 6.18's rxe
// (uverbs TestODP says why).
func TestODPRegions(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		dev, err := uverbs.OpenName(d.Name)
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Close()
		odp, err := rpma.IsODPCapable(dev)
		if err != nil {
			t.Fatal(err)
		}
		if !odp {
			if _, err := rpma.NewPeerWithOptions(dev, rpma.PeerOptions{ODP: rpma.ODPAlways}); !errors.Is(err, rpma.ErrUnsupported) || rpma.Code(err) != rpma.CodeNoSupp {
				t.Errorf("ODPAlways peer on %s without ODP: %v (code %d), want ErrUnsupported", d, err, rpma.Code(err))
			}
			s := newSide(t, d, rpma.ContextLocal, rpma.UsageReadSrc|rpma.UsageWriteDst)
			if s.mr.OnDemand() {
				t.Errorf("region on %s without ODP registered on demand", d)
			}
			err := s.mr.Advise(0, len(s.buf), rpma.AdvicePrefetchWrite, rpma.AdviseFlush)
			if !errors.Is(err, errors.ErrUnsupported) || rpma.Code(err) != rpma.CodeNoSupp {
				t.Errorf("Advise on %s: %v (code %d), want ErrUnsupported", d, err, rpma.Code(err))
			}
			if d.Driver == "rxe" {
				if testenv.KernelAtLeast(6, 14) {
					t.Fatalf("rxe on Linux %s is not ODP capable; it has been since 6.14", testenv.KernelRelease())
				}
				t.Skipf("no ODP on rxe before 6.14 (Linux %s)", testenv.KernelRelease())
			}
			t.Skipf("%s is not ODP capable", d)
		}

		opts := rpma.PeerOptions{Flush: rpma.FlushEmulated, ODP: rpma.ODPAlways}
		pg := os.Getpagesize()
		odpSide := func(typ rpma.ContextType, usage rpma.Usage) *side {
			r := rpmatest.NewSideWithOptions(t, ctxT(t), netip.MustParseAddr(d.Addr), typ, 4*pg, usage, opts)
			return &side{peer: r.Peer, buf: r.Buf, mr: r.MR}
		}
		server := odpSide(rpma.ContextLocal, rpma.UsageReadSrc|rpma.UsageWriteDst|rpma.UsageFlushTypeVisibility)
		client := odpSide(rpma.ContextRemote, rpma.UsageReadDst|rpma.UsageWriteSrc)
		if !server.mr.OnDemand() || !client.mr.OnDemand() || !server.peer.ODP() {
			t.Fatalf("ODPAlways: server region on demand %v, client %v", server.mr.OnDemand(), client.mr.OnDemand())
		}
		join(t, d, client, server, nil, nil)
		remote, err := rpma.RemoteMRFromDescriptor(client.conn.PrivateData())
		if err != nil {
			t.Fatal(err)
		}
		q := client.conn.CQ()
		always := func(id uint64) rpma.Op { return rpma.Op{Flags: rpma.CompletionAlways, Context: id} }

		// Both regions untouched: the client's source page is the one
		// the CPU fills, the server's is faulted in by the device.
		onError := func(id uint64) rpma.Op { return rpma.Op{Flags: rpma.CompletionOnError, Context: id} }
		copy(client.buf, "written on demand")
		if err := client.conn.Write(remote, pg, client.mr, 0, 17, onError(1)); err != nil {
			t.Fatal(err)
		}
		if err := client.conn.Flush(remote, pg, 17, rpma.FlushVisibility, always(2)); err != nil {
			t.Fatal(err)
		}
		complete(t, q, 2, cq.OpRDMARead)
		if got := string(server.buf[pg : pg+17]); got != "written on demand" {
			t.Errorf("server memory after write and flush: %q", got)
		}
		if err := client.conn.Read(client.mr, 2*pg, remote, pg, 17, always(3)); err != nil {
			t.Fatal(err)
		}
		complete(t, q, 3, cq.OpRDMARead)
		if got := string(client.buf[2*pg : 2*pg+17]); got != "written on demand" {
			t.Errorf("read back %q", got)
		}

		// The server drops its page; the device must read the one the
		// CPU writes next.
		if err := unix.Madvise(server.buf, unix.MADV_DONTNEED); err != nil {
			t.Fatal(err)
		}
		copy(server.buf[2*pg:], "after DONTNEED")
		if err := client.conn.Read(client.mr, 3*pg, remote, 2*pg, 14, always(4)); err != nil {
			t.Fatal(err)
		}
		complete(t, q, 4, cq.OpRDMARead)
		if got := string(client.buf[3*pg : 3*pg+14]); got != "after DONTNEED" {
			t.Errorf("read after MADV_DONTNEED: %q", got)
		}

		if err := server.mr.Advise(4*pg-1, 2, rpma.AdvicePrefetch, 0); !errors.Is(err, rpma.ErrInvalid) {
			t.Errorf("Advise past the region: %v, want ErrInvalid", err)
		}

		t.Run("prefetch", func(t *testing.T) {
			// Prefetch, then the same again.
			if err := unix.Madvise(server.buf, unix.MADV_DONTNEED); err != nil {
				t.Fatal(err)
			}
			err := server.mr.Advise(0, len(server.buf), rpma.AdvicePrefetchWrite, rpma.AdviseFlush)
			if err != nil {
				t.Fatalf("Advise PrefetchWrite, AdviseFlush: %v", err)
			}
			if err := client.mr.Advise(0, len(client.buf), rpma.AdvicePrefetch, 0); err != nil {
				t.Fatalf("Advise Prefetch: %v", err)
			}
			copy(client.buf[pg:], "prefetched")
			if err := client.conn.Write(remote, 3*pg, client.mr, pg, 10, onError(5)); err != nil {
				t.Fatal(err)
			}
			if err := client.conn.Read(client.mr, 3*pg, remote, 3*pg, 10, always(6)); err != nil {
				t.Fatal(err)
			}
			complete(t, q, 6, cq.OpRDMARead)
			if got, back := string(server.buf[3*pg:3*pg+10]), string(client.buf[3*pg:3*pg+10]); got != "prefetched" || back != "prefetched" {
				t.Errorf("after prefetch: server holds %q, read back %q", got, back)
			}
		})
	})
}

package rpma_test

import (
	"errors"
	"syscall"
	"testing"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/rpmatest"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rpma"
)

// rxeNative says whether d flushes and writes atomically in native
// operations: rxe since Linux 6.2 (both came in that release), never
// siw, nor a hardware device (up to Linux 6.12 rxe is the one driver that
// sets IB_DEVICE_FLUSH_* and IB_DEVICE_ATOMIC_WRITE). The tests take it
// from the driver and kernel release rather than from the device's
// capability flags, which is what rpma itself reads.
func rxeNative(t *testing.T, d testenv.Dev) bool {
	return d.Driver == "rxe" && testenv.KernelAtLeast(6, 2)
}

// TestNativeChoice checks that a peer made with the default options
// flushes and writes atomically the way librpma 1.3 would on the device:
// RDMA FLUSH and ATOMIC WRITE on rxe since Linux 6.2 (completion opcodes
// FLUSH and ATOMIC_WRITE), an RDMA read and a fenced inline RDMA write
// on rxe before 6.2 and on siw; and that either way the data arrives and
// the data path does not allocate.
func TestNativeChoice(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		native := rxeNative(t, d)
		server := newSide(t, d, rpma.ContextLocal, rpma.UsageReadSrc|rpma.UsageWriteDst|rpma.UsageFlushTypeVisibility|rpma.UsageRecv|rpma.UsageSend)
		client := newSide(t, d, rpma.ContextRemote, rpma.UsageReadDst|rpma.UsageWriteSrc|rpma.UsageSend|rpma.UsageRecv)
		for _, p := range []*rpma.Peer{client.peer, server.peer} {
			if p.NativeFlush() != native || p.NativeAtomicWrite() != native {
				t.Fatalf("on Linux %s: NativeFlush %v, NativeAtomicWrite %v; want %v for both",
					testenv.KernelRelease(), p.NativeFlush(), p.NativeAtomicWrite(), native)
			}
		}
		flushOp, atomicOp := cq.OpRDMARead, cq.OpRDMAWrite
		if native {
			flushOp, atomicOp = cq.OpFlush, cq.OpAtomicWrite
		}
		join(t, d, client, server, nil, nil)
		remote, err := rpma.RemoteMRFromDescriptor(client.conn.PrivateData())
		if err != nil {
			t.Fatal(err)
		}
		q := client.conn.CQ()
		copy(client.buf, "made visible")
		if err := client.conn.Write(remote, 100, client.mr, 0, 12, rpma.Op{Flags: rpma.CompletionOnError, Context: 1}); err != nil {
			t.Fatal(err)
		}
		if err := client.conn.Flush(remote, 100, 12, rpma.FlushVisibility, rpma.Op{Flags: rpma.CompletionAlways, Context: 2}); err != nil {
			t.Fatal(err)
		}
		complete(t, q, 2, flushOp)
		if got := string(server.buf[100:112]); got != "made visible" {
			t.Errorf("server memory after write+flush: %q", got)
		}
		if err := client.conn.AtomicWrite(remote, 16, [8]byte{'a', 't', 'o', 'm', 'i', 'c', 'a', 'l'}, rpma.Op{Flags: rpma.CompletionAlways, Context: 3}); err != nil {
			t.Fatal(err)
		}
		complete(t, q, 3, atomicOp)
		if got := string(server.buf[16:24]); got != "atomical" {
			t.Errorf("server memory after atomic write: %q", got)
		}

		if d.Driver == "siw" {
			return // as TestDataPathAllocs, which runs on RoCE
		}
		wc := make([]cq.WC, 1)
		var failed error
		for _, op := range []struct {
			name string
			post func() error
		}{
			{"Flush", func() error {
				return client.conn.Flush(remote, 100, 12, rpma.FlushVisibility, rpma.Op{Flags: rpma.CompletionAlways, Context: 4})
			}},
			{"AtomicWrite", func() error {
				return client.conn.AtomicWrite(remote, 16, [8]byte{1}, rpma.Op{Flags: rpma.CompletionAlways, Context: 5})
			}},
		} {
			allocs := testing.AllocsPerRun(100, func() {
				if err := op.post(); err != nil {
					failed = err
					return
				}
				for {
					_, err := q.GetWC(wc)
					if err == nil {
						return
					}
					if !errors.Is(err, rpma.ErrNoCompletion) {
						failed = err
						return
					}
				}
			})
			if failed != nil {
				t.Fatal(failed)
			}
			if allocs != 0 {
				t.Errorf("%s + GetWC allocate %v times per round, want 0", op.name, allocs)
			}
		}
	})
}

// TestFlushModes pairs peers of both flush modes, as Go peers or C
// librpma 1.2 (FlushEmulated's registration and flush) and 1.3 (the
// default's) would pair. Where both sides can flush natively (rxe since
// Linux 6.2), a native flush to a region registered the librpma 1.2 way
// and an emulated flush (an RDMA read) of a region registered the 1.3 way
// without UsageReadSrc both fail with a remote access error: librpma 1.3
// has the same problem with a 1.2 peer, and nothing on the wire tells
// one from the other. Before 6.2 every pair flushes by reading.
func TestFlushModes(t *testing.T) {
	d := testenv.RoCE(t)
	native := rxeNative(t, d)
	auto, emul := rpma.PeerOptions{}, rpma.PeerOptions{Flush: rpma.FlushEmulated}
	const dst = rpma.UsageWriteDst | rpma.UsageFlushTypeVisibility
	tests := []struct {
		name           string
		client, server rpma.PeerOptions
		usage          rpma.Usage // the server's region
		nativeStatus   cq.Status  // where native flush exists
	}{
		{"1.3 client, 1.3 server", auto, auto, dst, cq.Success},
		{"1.2 client, 1.2 server", emul, emul, dst, cq.Success},
		{"1.3 client, 1.2 server", auto, emul, dst, cq.RemAccessErr},
		{"1.2 client, 1.3 server", emul, auto, dst, cq.RemAccessErr},
		{"1.2 client, 1.3 server with READ_SRC", emul, auto, dst | rpma.UsageReadSrc, cq.Success},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server := newSideOpts(t, d, rpma.ContextLocal, tt.usage, tt.server)
			client := newSideOpts(t, d, rpma.ContextRemote, rpma.UsageReadDst|rpma.UsageWriteSrc, tt.client)
			join(t, d, client, server, nil, nil)
			remote, err := rpma.RemoteMRFromDescriptor(client.conn.PrivateData())
			if err != nil {
				t.Fatal(err)
			}
			if err := client.conn.Flush(remote, 0, 8, rpma.FlushVisibility, rpma.Op{Flags: rpma.CompletionAlways, Context: 1}); err != nil {
				t.Fatal(err)
			}
			want := cq.WC{ID: 1, Status: cq.Success, Opcode: cq.OpRDMARead}
			if native {
				want.Status = tt.nativeStatus
				if client.peer.NativeFlush() && want.Status == cq.Success {
					want.Opcode = cq.OpFlush
				}
			}
			got := rpmatest.Next(t, ctxT(t), client.conn.CQ())
			if got.ID != want.ID || got.Status != want.Status || (want.Status == cq.Success && got.Opcode != want.Opcode) {
				t.Errorf("flush completion %+v, want ID %d, %s, opcode %s", got, want.ID, want.Status, want.Opcode)
			}
		})
	}
}

// TestRegisterFlushPersistent: with native flush, librpma 1.3 registers
// UsageFlushTypePersistent with FLUSH_PERSISTENT access, which rxe
// grants only to persistent memory (Linux 6.2+ rxe_mr.c), so registering
// ordinary memory for it fails; FlushEmulated registers it with remote
// read, as librpma 1.2, and works on every kernel.
func TestRegisterFlushPersistent(t *testing.T) {
	d := testenv.RoCE(t)
	native := rxeNative(t, d)
	for _, tt := range []struct {
		name    string
		opts    rpma.PeerOptions
		wantErr bool
	}{
		{"default", rpma.PeerOptions{}, native},
		{"FlushEmulated", rpma.PeerOptions{Flush: rpma.FlushEmulated}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSideOpts(t, d, rpma.ContextLocal, rpma.UsageReadSrc, tt.opts)
			m, err := s.peer.RegisterMR(s.buf, rpma.UsageWriteDst|rpma.UsageFlushTypePersistent)
			if err == nil {
				m.Close()
			}
			switch {
			case tt.wantErr && (!errors.Is(err, rpma.ErrProvider) || !errors.Is(err, syscall.EINVAL)):
				t.Errorf("RegisterMR = %v, want ErrProvider with EINVAL", err)
			case !tt.wantErr && err != nil:
				t.Errorf("RegisterMR = %v, want success", err)
			}
		})
	}
}

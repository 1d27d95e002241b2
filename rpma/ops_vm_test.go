package rpma_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rpma"
)

// TestOperations writes, flushes, reads and atomically writes the
// server's memory through the descriptor it sent, on rxe and siw.
func TestOperations(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		client, server := connect(t, d, nil)
		if got := string(server.conn.PrivateData()[:6]); got != "client" {
			t.Errorf("server got private data %q", got)
		}
		remote, err := rpma.RemoteMRFromDescriptor(client.conn.PrivateData())
		if err != nil {
			t.Fatal(err)
		}
		if remote.Len() != 4096 || remote.FlushType() != rpma.UsageFlushTypeVisibility|rpma.UsageFlushTypePersistent {
			t.Errorf("remote MR: %d bytes, flush type %#x", remote.Len(), remote.FlushType())
		}
		q := client.conn.CQ()
		copy(client.buf, "persist me")
		if err := client.conn.Write(remote, 100, client.mr, 0, 10, rpma.Op{Flags: rpma.CompletionOnError, Context: 1}); err != nil {
			t.Fatal(err)
		}
		if err := client.conn.Flush(remote, 100, 10, rpma.FlushPersistent, rpma.Op{Flags: rpma.CompletionAlways, Context: 2}); !errors.Is(err, rpma.ErrUnsupported) {
			t.Errorf("persistent flush without the peer's direct write: %v, want ErrUnsupported", err)
		}
		if err := client.conn.Flush(remote, 100, 10, rpma.FlushVisibility, rpma.Op{Flags: rpma.CompletionAlways, Context: 2}); err != nil {
			t.Fatal(err)
		}
		// The flush is an RDMA read on the wire, as in librpma 1.2
		// (connect's peers are FlushEmulated).
		complete(t, q, 2, cq.OpRDMARead)
		if got := string(server.buf[100:110]); got != "persist me" {
			t.Errorf("server memory after write+flush: %q", got)
		}
		client.conn.ApplyRemotePeerConfig(rpma.PeerConfig{DirectWriteToPMem: true})
		if err := client.conn.Flush(remote, 100, 10, rpma.FlushPersistent, rpma.Op{Flags: rpma.CompletionAlways, Context: 3}); err != nil {
			t.Fatal(err)
		}
		complete(t, q, 3, cq.OpRDMARead)

		copy(server.buf[200:], "read me back")
		if err := client.conn.Read(client.mr, 500, remote, 200, 12, rpma.Op{Flags: rpma.CompletionAlways, Context: 4}); err != nil {
			t.Fatal(err)
		}
		complete(t, q, 4, cq.OpRDMARead)
		if got := string(client.buf[500:512]); got != "read me back" {
			t.Errorf("read %q", got)
		}
		var v [8]byte
		binary.LittleEndian.PutUint64(v[:], 0x1122334455667788)
		if err := client.conn.AtomicWrite(remote, 7, v, rpma.Op{Flags: rpma.CompletionAlways, Context: 5}); !errors.Is(err, rpma.ErrInvalid) {
			t.Errorf("atomic write to offset 7: %v, want ErrInvalid", err)
		}
		if err := client.conn.AtomicWrite(remote, 8, v, rpma.Op{Flags: rpma.CompletionAlways, Context: 5}); err != nil {
			t.Fatal(err)
		}
		// Native atomic write does not depend on the flush mode
		// (flush_vm_test.go checks which one each kernel picks).
		awOp := cq.OpRDMAWrite
		if client.peer.NativeAtomicWrite() {
			awOp = cq.OpAtomicWrite
		}
		complete(t, q, 5, awOp)
		if got := binary.LittleEndian.Uint64(server.buf[8:]); got != 0x1122334455667788 {
			t.Errorf("atomic write left %#x", got)
		}
		if err := client.conn.Write(remote, 0, client.mr, 0, 8, rpma.Op{Flags: 4, Context: 6}); !errors.Is(err, rpma.ErrInvalid) {
			t.Errorf("write with flags neither 0, ON_ERROR nor ALWAYS: %v, want ErrInvalid", err)
		}
		if err := client.conn.Write(remote, 4090, client.mr, 0, 8, rpma.Op{Flags: rpma.CompletionAlways, Context: 6}); !errors.Is(err, rpma.ErrInvalid) {
			t.Errorf("write past the remote region: %v, want ErrInvalid", err)
		}
	})
}

// TestDataPathAllocs checks that a write and polling for its completion
// allocate nothing.
func TestDataPathAllocs(t *testing.T) {
	d := testenv.RoCE(t)
	client, _ := connect(t, d, nil)
	remote, err := rpma.RemoteMRFromDescriptor(client.conn.PrivateData())
	if err != nil {
		t.Fatal(err)
	}
	q := client.conn.CQ()
	wc := make([]cq.WC, 1)
	var failed error
	allocs := testing.AllocsPerRun(100, func() {
		if err := client.conn.Write(remote, 0, client.mr, 0, 64, rpma.Op{Flags: rpma.CompletionAlways, Context: 9}); err != nil {
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
		t.Errorf("Write + GetWC allocate %v times per round, want 0", allocs)
	}
}

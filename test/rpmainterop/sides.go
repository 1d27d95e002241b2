package rpmainterop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/rpmatest"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rpma"
)

// The Go sides of the interop tests, and the C peer's process: this
// package's tests run both sides in one guest, test/twohost runs them in
// two guests across a wire.

const (
	bufSize     = 4096
	writeOffset = 100
	// commonDataSize is sizeof(struct common_data) in peer.c and
	// librpma's examples: 2+1+1 bytes of header, 24 of descriptors.
	commonDataSize = 28
)

// usageServer is what both servers register their memory with.
const usageServer = rpma.UsageReadSrc | rpma.UsageWriteDst | rpma.UsageFlushTypeVisibility

// commonData encodes librpma's examples' struct common_data.
func commonData(dataOffset uint16, mrDesc, pcfgDesc []byte) []byte {
	b := make([]byte, commonDataSize)
	binary.LittleEndian.PutUint16(b[0:], dataOffset)
	b[2] = byte(len(mrDesc))
	b[3] = byte(len(pcfgDesc))
	n := copy(b[4:], mrDesc)
	copy(b[4+n:], pcfgDesc)
	return b
}

// parseCommonData decodes struct common_data from the server's private
// data.
func parseCommonData(t testing.TB, pd []byte) (dataOffset int, mrDesc, pcfgDesc []byte) {
	t.Helper()
	if len(pd) < 4 {
		t.Fatalf("private data of %d bytes: % x", len(pd), pd)
	}
	mrSize, pcfgSize := int(pd[2]), int(pd[3])
	if mrSize != rpma.DescriptorSize || pcfgSize != rpma.PeerConfigDescriptorSize {
		t.Errorf("common_data says descriptors of %d and %d bytes, want %d and %d",
			mrSize, pcfgSize, rpma.DescriptorSize, rpma.PeerConfigDescriptorSize)
	}
	if len(pd) < 4+mrSize+pcfgSize {
		t.Fatalf("private data of %d bytes, too short for common_data: % x", len(pd), pd)
	}
	return int(binary.LittleEndian.Uint16(pd)), pd[4 : 4+mrSize], pd[4+mrSize : 4+mrSize+pcfgSize]
}

// CPeer is a running C peer. Its stdout lines arrive on lines as well.
type CPeer struct {
	who    string
	cancel context.CancelFunc
	lines  chan string
	done   chan struct{}
	// Read these once done is closed.
	stdout strings.Builder
	stderr bytes.Buffer
	err    error
}

// StartCPeer starts the C peer with args; it gets 30 seconds.
func StartCPeer(t testing.TB, args ...string) *CPeer {
	t.Helper()
	path := testenv.TestPeer(t, "rpmainterop")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	p := &CPeer{who: "C peer " + strings.Join(args, " "), cancel: cancel, lines: make(chan string, 64), done: make(chan struct{})}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stderr = &p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.stdout.WriteString(sc.Text() + "\n")
			select {
			case p.lines <- sc.Text():
			default: // nobody waits for lines any more
			}
		}
		close(p.lines)
		p.err = cmd.Wait()
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// String stops the peer if it still runs, and says how it ended and
// what it printed.
func (p *CPeer) String() string {
	p.cancel()
	<-p.done
	return fmt.Sprintf("%s: %v\nstdout:\n%s\nstderr:\n%s", p.who, p.err, p.stdout.String(), p.stderr.String())
}

// WaitLine waits for a stdout line starting with prefix.
func (p *CPeer) WaitLine(t testing.TB, prefix string) string {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				<-p.done
				t.Fatalf("no %q line\n%s", prefix, p)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-timeout:
			t.Fatalf("no %q line within 20s\n%s", prefix, p)
		}
	}
}

// Wait waits for the peer to exit and checks its status.
func (p *CPeer) Wait(t testing.TB) {
	t.Helper()
	<-p.done
	if p.err != nil {
		t.Fatalf("%s", p)
	}
	t.Logf("%s", p)
}

// ClientResult is what GoClient's flush and atomic write completed with.
type ClientResult struct {
	Flush       cq.WC
	AtomicWrite cq.WC // zero when the flush failed and it was not tried
}

// GoClient is the Go client of TestCServerGoClient: it connects to the C
// server at server from local with a peer made with opts, reads the first
// 16 bytes of its memory, writes "written by Go" at writeOffset, flushes
// it for visibility and, if the flush succeeds, writes goAtomic at
// atomicOffset with AtomicWrite; then it disconnects. It returns the
// flush's and the atomic write's completions, whose opcodes say how rpma
// carried them out. srv describes the server for failure messages.
//
// Against Debian 12's C librpma 1.2, opts must be FlushEmulated on a
// kernel with native flush (rxe since 6.2): librpma 1.2 registers the
// server's memory without the FLUSH access flags, and a native flush of
// it completes with a remote access error.
func GoClient(t testing.TB, ctx context.Context, local netip.Addr, server netip.AddrPort, srv fmt.Stringer, opts rpma.PeerOptions) ClientResult {
	t.Helper()
	me := rpmatest.NewSideWithOptions(t, ctx, local, rpma.ContextRemote, bufSize, rpma.UsageReadDst|rpma.UsageWriteSrc, opts)
	req, err := me.Peer.NewConnRequest(ctx, server, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, srv)
	}
	conn, err := req.Connect(nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, srv)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			conn.Disconnect()
			conn.NextEvent(ctx)
		}
		if err := conn.Close(); err != nil {
			t.Errorf("conn close: %v", err)
		}
	})
	if ev, err := conn.NextEvent(ctx); err != nil || ev != rpma.ConnEstablished {
		t.Fatalf("client event %v, %v\n%s", ev, err, srv)
	}
	pd := conn.PrivateData()
	t.Logf("C server's private data (%d bytes): % x", len(pd), pd)
	off, mrDesc, pcfgDesc := parseCommonData(t, pd)
	if off != 0 {
		t.Errorf("data_offset %d, want 0", off)
	}
	remote, err := rpma.RemoteMRFromDescriptor(mrDesc)
	if err != nil {
		t.Fatal(err)
	}
	if remote.Len() != bufSize || remote.FlushType() != rpma.UsageFlushTypeVisibility {
		t.Errorf("remote MR: %d bytes, flush type %#x", remote.Len(), remote.FlushType())
	}
	pcfg, err := rpma.PeerConfigFromDescriptor(pcfgDesc)
	if err != nil {
		t.Fatal(err)
	}
	conn.ApplyRemotePeerConfig(pcfg)

	q := conn.CQ()
	if err := conn.Read(me.MR, 0, remote, off, 16, rpma.Op{Flags: rpma.CompletionAlways, Context: 1}); err != nil {
		t.Fatal(err)
	}
	rpmatest.Complete(t, ctx, q, 1, cq.OpRDMARead)
	if got, want := string(me.Buf[:16]), "C server memory\x00"; got != want {
		t.Errorf("read %q from the C server, want %q", got, want)
	}
	copy(me.Buf[writeOffset:], goWrites)
	if err := conn.Write(remote, writeOffset, me.MR, writeOffset, len(goWrites), rpma.Op{Flags: rpma.CompletionOnError, Context: 2}); err != nil {
		t.Fatal(err)
	}
	if err := conn.Flush(remote, writeOffset, len(goWrites), rpma.FlushVisibility, rpma.Op{Flags: rpma.CompletionAlways, Context: 3}); err != nil {
		t.Fatal(err)
	}
	var res ClientResult
	res.Flush = rpmatest.Next(t, ctx, q)
	if res.Flush.ID != 3 {
		t.Fatalf("flush completion %+v, want ID 3", res.Flush)
	}
	if res.Flush.Status == cq.Success {
		if err := conn.AtomicWrite(remote, atomicOffset, goAtomic, rpma.Op{Flags: rpma.CompletionAlways, Context: 4}); err != nil {
			t.Fatal(err)
		}
		res.AtomicWrite = rpmatest.Next(t, ctx, q)
		if res.AtomicWrite.ID != 4 || res.AtomicWrite.Status != cq.Success {
			t.Fatalf("atomic write completion %+v, want ID 4 success", res.AtomicWrite)
		}
	}

	if err := conn.Disconnect(); err != nil {
		t.Fatal(err)
	}
	if ev, err := conn.NextEvent(ctx); err != nil || ev != rpma.ConnClosed {
		t.Errorf("client event after disconnect %v, %v", ev, err)
	}
	closed = true
	return res
}

// atomicOffset is where both clients write atomically: 8-byte aligned,
// inside the C server's 128-byte window and past the write at
// writeOffset.
const atomicOffset = 120

// goAtomic is what GoClient writes with AtomicWrite.
var goAtomic = [8]byte{'G', 'o', ' ', 'a', 't', 'o', 'm', '!'}

// goWrites is what GoClient writes into the C server's memory.
const goWrites = "written by Go"

// CheckCServerMemory checks the C server's "server memory: " line after
// GoClient's visit; atomic says whether GoClient's atomic write ran.
func CheckCServerMemory(t testing.TB, line string, atomic bool) {
	t.Helper()
	mem := strings.TrimPrefix(line, "server memory: ")
	want := "C server memory" + strings.Repeat(".", writeOffset-15) + goWrites
	if atomic {
		want += strings.Repeat(".", atomicOffset-writeOffset-len(goWrites)) + string(goAtomic[:])
	}
	if !strings.HasPrefix(mem, want) {
		t.Errorf("C server's memory:\n%q\nwant it to start with\n%q", mem, want)
	}
}

// GoServer is the Go server of TestGoServerCClient: its memory starts
// with goServerMemory, and it accepts one connection with the memory's
// descriptor in librpma's examples' common_data.
type GoServer struct {
	ep   *rpma.Endpoint
	buf  []byte
	pd   []byte
	Port uint16
}

// goServerMemory is what the C client reads: 16 bytes.
const goServerMemory = "Go server memory"

// ListenGo starts the Go server on addr, on a port of the kernel's
// choice, with its memory registered for usageServer by a default peer:
// READ_SRC gives the region remote read, which the C librpma 1.2
// client's reads and emulated flush need whatever the flush mode.
func ListenGo(t testing.TB, ctx context.Context, addr netip.Addr) *GoServer {
	t.Helper()
	s := rpmatest.NewSide(t, ctx, addr, rpma.ContextLocal, bufSize, usageServer)
	copy(s.Buf, goServerMemory)
	ep, err := s.Peer.Listen(netip.AddrPortFrom(addr, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ep.Close(); err != nil {
			t.Errorf("endpoint shutdown: %v", err)
		}
	})
	la, err := ep.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return &GoServer{ep: ep, buf: s.Buf, pd: commonData(0, s.MR.Descriptor(), rpma.PeerConfig{}.Descriptor()), Port: la.Port()}
}

// Serve accepts one connection and waits for the client to disconnect.
// cli describes the client for failure messages.
func (s *GoServer) Serve(t testing.TB, ctx context.Context, cli fmt.Stringer) {
	t.Helper()
	if ev := s.serve(t, ctx, cli); ev != rpma.ConnClosed {
		t.Errorf("server event %v, want the client's disconnect\n%s", ev, cli)
	}
}

// ServeUntilGone is Serve for a client that may fail and exit instead of
// disconnecting: it returns the connection's last event, which is
// ConnClosed or ConnLost.
func (s *GoServer) ServeUntilGone(t testing.TB, ctx context.Context, cli fmt.Stringer) rpma.ConnEvent {
	t.Helper()
	return s.serve(t, ctx, cli)
}

func (s *GoServer) serve(t testing.TB, ctx context.Context, cli fmt.Stringer) rpma.ConnEvent {
	t.Helper()
	req, err := s.ep.NextConnRequest(ctx, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, cli)
	}
	conn, err := req.Connect(s.pd)
	if err != nil {
		t.Fatalf("%v\n%s", err, cli)
	}
	t.Cleanup(func() {
		if err := conn.Close(); err != nil {
			t.Errorf("conn close: %v", err)
		}
	})
	if ev, err := conn.NextEvent(ctx); err != nil || ev != rpma.ConnEstablished {
		t.Fatalf("server event %v, %v\n%s", ev, err, cli)
	}
	ev, err := conn.NextEvent(ctx)
	if err != nil {
		t.Errorf("server event %v, %v, want the client's disconnect\n%s", ev, err, cli)
	}
	if err := conn.Disconnect(); err != nil {
		t.Errorf("disconnect: %v", err)
	}
	return ev
}

// Check checks the server's memory after the C client's visit.
func (s *GoServer) Check(t testing.TB) {
	t.Helper()
	if got, want := string(s.buf[writeOffset:writeOffset+12]), "written by C"; got != want {
		t.Errorf("Go server's memory at %d: %q, want %q", writeOffset, got, want)
	}
	if got, want := string(s.buf[:16]), goServerMemory; got != want {
		t.Errorf("Go server's memory at 0: %q, want %q", got, want)
	}
	if got, want := string(s.buf[atomicOffset:atomicOffset+8]), "C atomic"; got != want {
		t.Errorf("Go server's memory at %d: %q, want %q (the C client's atomic write)", atomicOffset, got, want)
	}
}

// CAtomicWrite is how the C client's librpma carried out its atomic
// write.
type CAtomicWrite struct {
	// Opcode is its completion's opcode as the C client printed it:
	// IBV_WC_ATOMIC_WRITE (9) for a native atomic write,
	// IBV_WC_RDMA_WRITE (1) for librpma's fenced inline write.
	Opcode cq.Opcode
	// Emulating says that rpma_peer_new logged "Native atomic write is
	// not supported": librpma decided to emulate, for want of the
	// device's capability or of ibv_wr_atomic_write in the libibverbs it
	// was built against.
	Emulating bool
}

// CheckCClient checks the C client's output after its visit to a Go
// server, and returns what it reported of its atomic write.
func CheckCClient(t testing.TB, out string) CAtomicWrite {
	t.Helper()
	if !strings.Contains(out, "read: "+goServerMemory+"\n") {
		t.Errorf("C client did not print %q:\n%s", "read: "+goServerMemory, out)
	}
	const prefix = "atomic write opcode: "
	i := strings.Index(out, prefix)
	if i < 0 {
		t.Fatalf("C client did not print %q:\n%s", prefix, out)
	}
	var op int
	if _, err := fmt.Sscanf(out[i+len(prefix):], "%d", &op); err != nil {
		t.Fatalf("C client's %q line: %v\n%s", prefix, err, out)
	}
	return CAtomicWrite{
		Opcode:    cq.Opcode(op),
		Emulating: strings.Contains(out, "Native atomic write is not supported"),
	}
}

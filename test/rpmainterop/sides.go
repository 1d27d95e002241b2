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

// GoClient is the Go client of TestCServerGoClient: it connects to the C
// server at server from local, reads the first 16 bytes of its memory,
// writes "written by Go" at writeOffset, flushes it for visibility and
// disconnects. srv describes the server for failure messages.
func GoClient(t testing.TB, ctx context.Context, local netip.Addr, server netip.AddrPort, srv fmt.Stringer) {
	t.Helper()
	me := rpmatest.NewSide(t, ctx, local, rpma.ContextRemote, bufSize, rpma.UsageReadDst|rpma.UsageWriteSrc)
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
	if err := conn.Read(me.MR, 0, remote, off, 16, rpma.CompletionAlways, 1); err != nil {
		t.Fatal(err)
	}
	rpmatest.Complete(t, ctx, q, 1, cq.OpRDMARead)
	if got, want := string(me.Buf[:16]), "C server memory\x00"; got != want {
		t.Errorf("read %q from the C server, want %q", got, want)
	}
	copy(me.Buf[writeOffset:], goWrites)
	if err := conn.Write(remote, writeOffset, me.MR, writeOffset, len(goWrites), rpma.CompletionOnError, 2); err != nil {
		t.Fatal(err)
	}
	if err := conn.Flush(remote, writeOffset, len(goWrites), rpma.FlushVisibility, rpma.CompletionAlways, 3); err != nil {
		t.Fatal(err)
	}
	rpmatest.Complete(t, ctx, q, 3, cq.OpRDMARead)

	if err := conn.Disconnect(); err != nil {
		t.Fatal(err)
	}
	if ev, err := conn.NextEvent(ctx); err != nil || ev != rpma.ConnClosed {
		t.Errorf("client event after disconnect %v, %v", ev, err)
	}
	closed = true
}

// goWrites is what GoClient writes into the C server's memory.
const goWrites = "written by Go"

// CheckCServerMemory checks the C server's "server memory: " line after
// GoClient's visit.
func CheckCServerMemory(t testing.TB, line string) {
	t.Helper()
	mem := strings.TrimPrefix(line, "server memory: ")
	want := "C server memory" + strings.Repeat(".", writeOffset-15) + goWrites
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
// choice.
func ListenGo(t testing.TB, ctx context.Context, addr netip.Addr) *GoServer {
	t.Helper()
	s := rpmatest.NewSide(t, ctx, addr, rpma.ContextLocal, bufSize, usageServer)
	copy(s.Buf, goServerMemory)
	ep, err := s.Peer.Listen(netip.AddrPortFrom(addr, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ep.Shutdown(); err != nil {
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
	if err != nil || ev != rpma.ConnClosed {
		t.Errorf("server event %v, %v, want the client's disconnect\n%s", ev, err, cli)
	}
	if err := conn.Disconnect(); err != nil {
		t.Errorf("disconnect: %v", err)
	}
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
}

// CheckCClient checks the C client's output after its visit to a Go
// server.
func CheckCClient(t testing.TB, out string) {
	t.Helper()
	if !strings.Contains(out, "read: "+goServerMemory+"\n") {
		t.Errorf("C client did not print %q:\n%s", "read: "+goServerMemory, out)
	}
}

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestCPeer runs every example's Go server against C clients and its Go
// clients against a C server: test/rpmaexamples/testdata/peer.c, our own
// C on Debian's librpma, which does on the wire what each of librpma's
// examples does (its private data, message order, flags and who ends the
// connection; see the file's comment). TestCExamples runs librpma's own
// examples the same way, by hand.
func TestCPeer(t *testing.T) {
	cases := []peerCase{
		{name: "01", example: "01-connection", proto: "hello", iwarpOK: true,
			peerClients: [][]string{nil}, goServerWant: []string{"Received a message: Hello server!"}, peerClientWant: []string{"Hello client!"},
			goClients: [][]string{nil}, goClientWant: []string{"Received a message: Hello client!"}, peerServerWant: []string{"Hello server!"}},
		{name: "02", example: "02-read-to-volatile", proto: "read", iwarpOK: true,
			peerClients: [][]string{nil}, peerClientWant: []string{"got: read Hello client!", "got: common_data offset 0 mr 21 pcfg 0"},
			goClients: [][]string{nil}, goClientWant: []string{"Read a message: Hello client!"}},
		{name: "04", example: "04-write-to-persistent", proto: "write", iwarpOK: true,
			peerClients: [][]string{nil}, goServerWant: []string{"New value: Hello from C!"}, peerClientWant: []string{"got: written", "got: common_data offset 0 mr 21 pcfg 0"},
			goClients: [][]string{nil}, goClientWant: []string{"Translation: ¡Hola Mundo!"}, peerServerWant: []string{"got: memory Hello world!"}},
		{name: "05", example: "05-flush-to-persistent", proto: "flush", iwarpOK: true,
			peerClients: [][]string{nil}, goServerWant: []string{"New value: Hello from C!"}, peerClientWant: []string{"got: written", "got: common_data offset 0 mr 21 pcfg 1"},
			goClients: [][]string{nil}, goClientWant: []string{"RPMA_FLUSH_TYPE_PERSISTENT is NOT supported", "Translation: ¡Hola Mundo!"}, peerServerWant: []string{"got: memory Hello world!"}},
		multiPeerCase("06-multiple-connections"),
		multiPeerCase("06scch-multiple-connections"),
		{name: "07", example: "07-atomic-write", proto: "atomic", iwarpOK: true,
			peerClients: [][]string{{"one", "two"}}, goServerWant: []string{"one", "two"}, peerClientWant: []string{"got: used 16", "got: appended 2", "got: common_data offset 8 mr 21 pcfg 0"},
			goClients: [][]string{{"three", "four"}}, goClientWant: []string{"used value: 16"}, peerServerWant: []string{"three.four."}},
		ppPeerCase("08", "08-messages-ping-pong", "for", "dc", "1 dc", "", nil),
		ppPeerCase("08srq", "08srq-simple-messages-ping-pong-with-srq", "do", "wc", "1 d", "", nil),
		ppPeerCase("08srq m", "08srq-simple-messages-ping-pong-with-srq", "do", "wc", "1 d", "", []string{"m"}),
		ppPeerCase("08srq r", "08srq-simple-messages-ping-pong-with-srq", "do", "wc", "1 d", "", []string{"r"}),
		{name: "10", example: "10-send-with-imm", proto: "sendimm",
			peerClients: [][]string{{"1234", "word"}}, goServerWant: []string{"Received value 'word' with immediate data '1234'"}, peerClientWant: []string{"got: sent imm 1234"},
			goClients: [][]string{{"4321", "drow"}}, goClientWant: []string{"Sending value 'drow' with immediate data '4321'"}, peerServerWant: []string{"got: imm 4321, 1024 bytes, drow"}},
		{name: "10 no word", example: "10-send-with-imm", proto: "sendimm",
			peerClients: [][]string{{"77"}}, goServerWant: []string{"Received value '' with immediate data '77'"}, peerClientWant: []string{"got: sent imm 77"},
			goClients: [][]string{{"78"}}, goClientWant: []string{"Sending immediate data '78'"}, peerServerWant: []string{"got: imm 78, 0 bytes, "}},
		{name: "11", example: "11-write-with-imm", proto: "writeimm",
			peerClients: [][]string{{"1234"}}, goServerWant: []string{"The value '1234' was written together with immediate data '1234'"}, peerClientWant: []string{"got: sent imm 1234", "got: common_data offset 0 mr 21 pcfg 0"},
			goClients: [][]string{{"4321"}}, goClientWant: []string{"Writing value '4321' with immediate data '4321'"}, peerServerWant: []string{"got: imm 4321, "}},
		ppPeerCase("12", "12-receive-completion-queue", "for", "dc", "1 dc", "SERVER: ", nil),
		ppPeerCase("12scch", "12scch-receive-completion-queue", "for", "dc", "1 dc", "SERVER: ", nil),
		{name: "13", example: "13-messages-ping-pong-with-srq", proto: "pp", iwarpOK: true,
			goServerArgs: []string{"2"}, peerClients: [][]string{{"10", "2", "do", "wc"}, {"20", "2", "do", "wc"}},
			goServerWant:   []string{"The client #2 has been connected.", "Server ended listening.", "[server] value received: 11 from", "[server] value received: 21 from"},
			peerClientWant: []string{"got: done at 12"}, peerClientWant2: []string{"got: done at 22"},
			peerServerArgs: []string{"2", "d"}, goClients: [][]string{{"30", "2"}, {"40", "2"}},
			goClientWant: []string{"] value received: 32"}, goClientWant2: []string{"] value received: 42"},
			peerServerWant: []string{"got: client 2\n", "got: client 1 done", "got: client 2 done"}},
	}
	// The Go servers of 06 and 13 end when no client came for a while.
	old := multiIdle
	multiIdle = 3 * time.Second
	t.Cleanup(func() { multiIdle = old })
	peerPath := testenv.TestPeer(t, "rpmaexamples")
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		for _, c := range cases {
			if d.Driver == "siw" && !c.iwarpOK {
				continue // iWARP has no immediate data
			}
			ex := lookup(c.example)
			if ex == nil {
				t.Fatalf("no example %s", c.example)
			}
			t.Run(c.name+"/Go-server-C-client", func(t *testing.T) {
				if d.Driver == "siw" && c.name == "13" {
					// Not run on siw: two C clients connect at once and
					// each sends its first value as soon as it is
					// connected; one that lands between siw_accept's MPA
					// reply and siw_qp_socket_assoc waits in the socket
					// until more data comes (docs/rsocket.md, "siw,
					// passive side"), and the C client sends nothing more
					// before it has the answer: 1 run of 5 hung on 6.1.
					// The hand runs of librpma's own 13 against this
					// server (docs/librpma-mapping.md) and TestExamples'
					// Go-Go 13 cover siw.
					t.Skip("not run on siw: the kernel's passive-side window with C clients (see the comment)")
				}
				c.goServer(t, d, ex, peerPath)
			})
			t.Run(c.name+"/C-server-Go-client", func(t *testing.T) { c.cServer(t, d, ex, peerPath) })
		}
	})
}

// peerCase is one example against the C peer, both ways.
type peerCase struct {
	name, example, proto string
	iwarpOK              bool // false: immediate data, which iWARP lacks
	serial               bool // clients one after another (06); else at once

	goServerArgs    []string   // after <addr> <port>
	peerClients     [][]string // each C client's args after <addr> <port>
	goServerWant    []string
	peerClientWant  []string // the first C client's lines; the others' too unless peerClientWant2
	peerClientWant2 []string // the second C client's

	peerServerArgs []string
	goClients      [][]string
	goClientWant   []string
	goClientWant2  []string
	peerServerWant []string
}

func multiPeerCase(ex string) peerCase {
	return peerCase{name: ex[:strings.Index(ex, "-")], example: ex, proto: "multi", iwarpOK: true, serial: true,
		peerClients: [][]string{{"Ala"}, {"Ola"}}, goServerWant: []string{"Today I have got in touch with:", "- Ala", "- Ola"}, peerClientWant: []string{"got: read by the server"},
		peerServerArgs: []string{"2"}, goClients: [][]string{{"1"}, {"2"}},
		goClientWant: []string{"My names is: "}, peerServerWant: []string{"got: name " + nameOf(1), "got: name " + nameOf(2), "got: common_data offset 0 mr 21 pcfg 0"}}
}

// ppPeerCase is a one-client ping-pong: count and end are the C client's
// round count and ending, serverArgs the C server's, prefix the Go
// server's line prefix.
func ppPeerCase(name, ex, count, end, serverArgs, prefix string, goServerArgs []string) peerCase {
	// 08 and 12 run <rounds>-1 rounds, 08srq and 13 <rounds>.
	last := "9"
	if count == "do" {
		last = "10"
	}
	return peerCase{name: name, example: ex, proto: "pp", iwarpOK: true, goServerArgs: goServerArgs,
		peerClients: [][]string{{"7", "3", count, end}}, goServerWant: []string{prefix + "Value received: 7", prefix + "Value sent: 8"},
		peerClientWant: []string{"got: 7 -> 8", "got: done at " + last},
		peerServerArgs: strings.Fields(serverArgs), goClients: [][]string{{"7", "3"}},
		peerServerWant: []string{"got: client 1 sent 7", "got: client 1 sent 8", "got: client 1 done"}}
}

var peerPort = 7900

// goServer runs the Go server in-process and the C clients once it
// listens; 06 on siw gets a second try, as in cServer.
func (c peerCase) goServer(t *testing.T, d testenv.Dev, ex *example, peerPath string) {
	srv, clis := c.tryAgainOnLost(t, d, func() (testenv.Result, []testenv.Result) { return c.goServerOnce(t, d, ex, peerPath) })
	wantLines(t, srv, c.goServerWant)
	for i, r := range clis {
		want := c.peerClientWant
		if i == 1 && c.peerClientWant2 != nil {
			want = c.peerClientWant2
		}
		wantLines(t, r, want)
	}
}

func (c peerCase) goServerOnce(t *testing.T, d testenv.Dev, ex *example, peerPath string) (testenv.Result, []testenv.Result) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	peerPort++
	port := fmt.Sprint(peerPort)
	listening := make(chan struct{})
	var once sync.Once
	sctx := withListenHook(ctx, func() { once.Do(func() { close(listening) }) })
	srvDone := make(chan testenv.Result, 1)
	go func() {
		srvDone <- testenv.GoSide(ex.name+" server", ex.server)(sctx, append([]string{d.Addr, port}, c.goServerArgs...))
	}()
	select {
	case <-listening:
	case r := <-srvDone:
		t.Fatalf("server ended before it listened: %v", r)
	}
	if d.Driver == "siw" && c.proto == "pp" {
		// The C client's first send must not land in siw's passive-side
		// window (peer.c, settle): a loaded CI machine hung 12 there on
		// 6.12 (2026-11-27), the Go server waiting for a receive that
		// siw held in the socket. The test is of the programs' protocol.
		t.Setenv("RPMAEXAMPLES_SETTLE_MS", "50")
	}
	peer := testenv.CSide("rpmaexamples "+c.proto+" client", peerPath)
	clis := c.clients(len(c.peerClients), func(i int) testenv.Result {
		return peer(ctx, append([]string{c.proto, "client", d.Addr, port}, c.peerClients[i]...))
	})
	return <-srvDone, clis
}

// cServer runs the C server and the Go clients in-process once it says
// it listens.
//
// On siw, 06's server reads the client's name as soon as it sees the
// connection established, and the read can reach the client before its
// kernel has its iWARP connection ready: the client's connection is then
// lost and the server's read flushed. librpma's own client and server
// show it against each other too (docs/librpma-mapping.md, (c)). The C
// server therefore waits 50 ms after the accept on siw (cServerOnce), and
// the case keeps a second try.
func (c peerCase) cServer(t *testing.T, d testenv.Dev, ex *example, peerPath string) {
	srv, clis := c.tryAgainOnLost(t, d, func() (testenv.Result, []testenv.Result) { return c.cServerOnce(t, d, ex, peerPath) })
	wantLines(t, srv, c.peerServerWant)
	for i, r := range clis {
		want := c.goClientWant
		if i == 1 && c.goClientWant2 != nil {
			want = c.goClientWant2
		}
		wantLines(t, r, want)
	}
}

func (c peerCase) cServerOnce(t *testing.T, d testenv.Dev, ex *example, peerPath string) (testenv.Result, []testenv.Result) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	peerPort++
	port := fmt.Sprint(peerPort)
	out := &watch{want: "listening\n", seen: make(chan struct{})}
	var errb bytes.Buffer
	args := append([]string{c.proto, "server", d.Addr, port}, c.peerServerArgs...)
	cmd := exec.CommandContext(ctx, peerPath, args...)
	cmd.Stdout, cmd.Stderr = out, &errb
	if d.Driver == "siw" && c.proto == "multi" {
		// Give the client's kernel time to finish its side of the
		// iWARP connection before the server's early read (see
		// cServer): the test is of the two programs' protocol, not of
		// siw's window, which a loaded CI machine hit twice in a row.
		cmd.Env = append(os.Environ(), "RPMAEXAMPLES_SETTLE_MS=50")
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	srvDone := make(chan testenv.Result, 1)
	go func() {
		err := cmd.Wait()
		code := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
		}
		srvDone <- testenv.Result{Who: "C rpmaexamples " + strings.Join(args, " "), Code: code, Stdout: out.String(), Stderr: errb.String()}
	}()
	select {
	case <-out.seen:
	case r := <-srvDone:
		t.Fatalf("C server ended before it listened: %v", r)
	}
	clis := c.clients(len(c.goClients), func(i int) testenv.Result {
		return testenv.GoSide(ex.name+" client", ex.client)(ctx, append([]string{d.Addr, port}, c.goClients[i]...))
	})
	return <-srvDone, clis
}

// tryAgainOnLost runs once, and once more only for 06 on siw when a
// client's connection was lost to the server's early read (see cServer).
func (c peerCase) tryAgainOnLost(t *testing.T, d testenv.Dev, once func() (testenv.Result, []testenv.Result)) (testenv.Result, []testenv.Result) {
	srv, clis := once()
	lost := slices.ContainsFunc(clis, func(r testenv.Result) bool { return strings.Contains(r.Stderr, "Connection lost") })
	if d.Driver == "siw" && c.proto == "multi" && lost {
		t.Logf("siw's early read lost a connection; trying again:\n%v", srv)
		srv, clis = once()
	}
	return srv, clis
}

// clients runs n clients, one after another when the case says so.
func (c peerCase) clients(n int, run func(i int) testenv.Result) []testenv.Result {
	rs := make([]testenv.Result, n)
	if c.serial {
		for i := range n {
			rs[i] = run(i)
		}
		return rs
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { rs[i] = run(i) })
	}
	wg.Wait()
	return rs
}

// wantLines checks that r exited 0 and printed every string of want.
func wantLines(t *testing.T, r testenv.Result, want []string) {
	t.Helper()
	if r.Code != 0 {
		t.Errorf("%v", r)
		return
	}
	for _, w := range want {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("%s: no %q in\n%v", r.Who, w, r)
		}
	}
}

// watch is a process's stdout that says when want appeared in it.
type watch struct {
	mu   sync.Mutex
	b    bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *watch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.b.Write(p)
	if strings.Contains(w.b.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

func (w *watch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

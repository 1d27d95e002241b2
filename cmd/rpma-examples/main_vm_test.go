package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
)

// nextPort gives every server its own port.
var nextPort atomic.Int32

func init() { nextPort.Store(7300) }

// pairCase is one example run: a server and its clients, all in-process,
// and the lines each must print.
type pairCase struct {
	name       string
	example    string
	serverArgs []string   // after <addr> <port>
	clients    [][]string // each client's args after <addr> <port>
	iwarpOK    bool       // false: the example needs immediate data, which iWARP lacks
	serverWant []string
	clientWant [][]string // per client; nil: the first entry for all
}

// runExample starts ex's server, waits until it listens, then runs the
// clients concurrently.
func runExample(t *testing.T, d testenv.Dev, ex *example, serverArgs []string, clients [][]string) (testenv.Result, []testenv.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	port := fmt.Sprint(nextPort.Add(1))
	listening := make(chan struct{})
	var once sync.Once
	sctx := withListenHook(ctx, func() { once.Do(func() { close(listening) }) })
	srvDone := make(chan testenv.Result, 1)
	go func() {
		srvDone <- testenv.GoSide(ex.name+" server", ex.server)(sctx, append([]string{d.Addr, port}, serverArgs...))
	}()
	select {
	case <-listening:
	case r := <-srvDone:
		t.Fatalf("server ended before it listened: %v", r)
	}
	clis := make([]testenv.Result, len(clients))
	var wg sync.WaitGroup
	for i, a := range clients {
		wg.Go(func() {
			clis[i] = testenv.GoSide(ex.name+" client", ex.client)(ctx, append([]string{d.Addr, port}, a...))
		})
	}
	wg.Wait()
	return <-srvDone, clis
}

func checkLines(t *testing.T, r testenv.Result, want []string) {
	t.Helper()
	if r.Code != 0 {
		t.Errorf("%v", r)
		return
	}
	for _, w := range want {
		if !strings.Contains(r.Stdout, w+"\n") {
			t.Errorf("%s: no line %q in\n%v", r.Who, w, r)
		}
	}
}

func nameOf(seed uint32) string { return names[glibcRand(seed)%uint32(len(names))] }

func TestExamples(t *testing.T) {
	hello := []string{"Next value: Hello world!", "translating...", "Translation: ¡Hola Mundo!"}
	multi := func(ex string) pairCase {
		return pairCase{
			name: ex, example: ex, clients: [][]string{{"1"}, {"2"}, {"42"}}, iwarpOK: true,
			serverWant: []string{"Today I have got in touch with:", "- " + nameOf(1), "- " + nameOf(2), "- " + nameOf(42)},
			clientWant: [][]string{{"My names is: " + nameOf(1)}, {"My names is: " + nameOf(2)}, {"My names is: " + nameOf(42)}},
		}
	}
	srq := func(flag string) pairCase {
		c := pairCase{
			name: "08srq" + flag, example: "08srq-simple-messages-ping-pong-with-srq", clients: [][]string{{"5", "3"}}, iwarpOK: true,
			serverWant: []string{"Value received: 5", "Value sent: 6", "Value received: 7", "Value sent: 8"},
			clientWant: [][]string{{"Value sent: 5", "Value received: 6", "Value sent: 7", "Value received: 8"}},
		}
		if flag != "" {
			c.serverArgs = []string{flag}
		}
		return c
	}
	rcq := func(ex string) pairCase {
		return pairCase{
			name: ex, example: ex, clients: [][]string{{"1", "3"}}, iwarpOK: true,
			serverWant: []string{"SERVER: Value received: 1", "SERVER: Value sent: 2", "SERVER: Value received: 2", "SERVER: Value sent: 3"},
			clientWant: [][]string{{"CLIENT: Value sent: 1", "CLIENT: Value received: 2", "CLIENT: Value sent: 2", "CLIENT: Value received: 3"}},
		}
	}
	pid := os.Getpid()
	cases := []pairCase{
		{name: "01", example: "01-connection", clients: [][]string{nil}, iwarpOK: true,
			serverWant: []string{"Received a message: Hello server!"}, clientWant: [][]string{{"Received a message: Hello client!"}}},
		{name: "02", example: "02-read-to-volatile", clients: [][]string{nil}, iwarpOK: true,
			clientWant: [][]string{{"Read a message: Hello client!"}}},
		{name: "04", example: "04-write-to-persistent", clients: [][]string{nil}, iwarpOK: true,
			serverWant: []string{"New value: Hello world!"}, clientWant: [][]string{hello}},
		{name: "05", example: "05-flush-to-persistent", clients: [][]string{nil}, iwarpOK: true,
			serverWant: []string{"New value: Hello world!"},
			clientWant: [][]string{append([]string{"RPMA_FLUSH_TYPE_PERSISTENT is NOT supported, RPMA_FLUSH_TYPE_VISIBILITY is used instead"}, hello...)}},
		{name: "05 pmem path ignored", example: "05-flush-to-persistent", serverArgs: []string{"/dev/dax0.0", "on"}, clients: [][]string{{"/mnt/pmem/file"}}, iwarpOK: true,
			serverWant: []string{"New value: Hello world!"}, clientWant: [][]string{hello}},
		multi("06-multiple-connections"),
		multi("06scch-multiple-connections"),
		{name: "07", example: "07-atomic-write", clients: [][]string{{"hello", "atomic", "world"}}, iwarpOK: true,
			serverWant: []string{"hello", "atomic", "world"}, clientWant: [][]string{{"used value: 16"}}},
		{name: "08", example: "08-messages-ping-pong", clients: [][]string{{"5", "3"}}, iwarpOK: true,
			serverWant: []string{"Value received: 5", "Value sent: 6", "Value received: 6", "Value sent: 7"},
			clientWant: [][]string{{"Value sent: 5", "Value received: 6", "Value sent: 6", "Value received: 7"}}},
		srq(""), srq("m"), srq("r"),
		{name: "10", example: "10-send-with-imm", clients: [][]string{{"12345", "hello"}},
			serverWant: []string{"Received value 'hello' with immediate data '12345'"},
			clientWant: [][]string{{"Sending value 'hello' with immediate data '12345'"}}},
		{name: "10 no word", example: "10-send-with-imm", clients: [][]string{{"4294967295"}},
			serverWant: []string{"Received value '' with immediate data '4294967295'"},
			clientWant: [][]string{{"Sending immediate data '4294967295'"}}},
		{name: "11", example: "11-write-with-imm", clients: [][]string{{"4321"}},
			serverWant: []string{"The value '4321' was written together with immediate data '4321'"},
			clientWant: [][]string{{"Writing value '4321' with immediate data '4321'"}}},
		rcq("12-receive-completion-queue"),
		rcq("12scch-receive-completion-queue"),
		{name: "13", example: "13-messages-ping-pong-with-srq", serverArgs: []string{"2"}, clients: [][]string{{"10", "2"}, {"20", "2"}}, iwarpOK: true,
			serverWant: []string{"The client #1 has been connected.", "The client #2 has been connected.", "Server ended listening."},
			clientWant: [][]string{
				{fmt.Sprintf("[client #%d] value sent: 10", pid), fmt.Sprintf("[client #%d] value received: 12", pid)},
				{fmt.Sprintf("[client #%d] value sent: 20", pid), fmt.Sprintf("[client #%d] value received: 22", pid)},
			}},
		// The server answers only once no client has come for 5 s, longer
		// than any bounded wait of the clients (eventTimeout below): as in
		// C, a client waits for completions and the close without a bound.
		// librpma's run-all-examples.sh runs this pairing with 15 s and 100
		// rounds; this is the same with a shorter idle time.
		{name: "13 late answers", example: "13-messages-ping-pong-with-srq", serverArgs: []string{"5"}, clients: [][]string{{"1", "100"}, {"5", "100"}}, iwarpOK: true,
			serverWant: []string{"The client #1 has been connected.", "The client #2 has been connected.", "Server ended listening."},
			clientWant: [][]string{
				{fmt.Sprintf("[client #%d] value sent: 1", pid), fmt.Sprintf("[client #%d] value received: 101", pid)},
				{fmt.Sprintf("[client #%d] value sent: 5", pid), fmt.Sprintf("[client #%d] value received: 105", pid)},
			}},
	}
	// Shorter than the examples' 15 s, but long enough for a client
	// process to start and connect on a loaded 2-core host: with 2 s,
	// 06scch's server on siw once timed out before its third client
	// connected.
	old, oldEvent := multiIdle, eventTimeout
	multiIdle, eventTimeout = 5*time.Second, 4*time.Second
	t.Cleanup(func() { multiIdle, eventTimeout = old, oldEvent })
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		for _, c := range cases {
			if d.Driver == "siw" && !c.iwarpOK {
				// Not run: iWARP (siw) has no immediate data, so send and
				// write with immediate are not for it.
				continue
			}
			t.Run(c.name, func(t *testing.T) {
				ex := lookup(c.example)
				if ex == nil {
					t.Fatalf("no example %s", c.example)
				}
				srv, clis := runExample(t, d, ex, c.serverArgs, c.clients)
				checkLines(t, srv, c.serverWant)
				for i, r := range clis {
					want := c.clientWant[0]
					if len(c.clientWant) > i {
						want = c.clientWant[i]
					}
					checkLines(t, r, want)
				}
				if c.name == "13" {
					for _, v := range []string{"10", "11", "20", "21"} {
						if !strings.Contains(srv.Stdout, "[server] value received: "+v+" from the connection [qp#") {
							t.Errorf("server did not receive %s:\n%v", v, srv)
						}
					}
				}
			})
		}
	})
}

func TestDemo(t *testing.T) {
	devs := testenv.Devices(t)
	var out, errb strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	addrs := []string{}
	for _, d := range devs {
		addrs = append(addrs, d.Addr)
	}
	code := demo(ctx, addrs, &out, &errb)
	if code != 0 {
		t.Fatalf("demo exited %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	for _, d := range devs {
		for _, w := range []string{
			"[" + d.Name + " server] New value: Hello world!\n",
			"[" + d.Name + " client] Translation: ¡Hola Mundo!\n",
			"[" + d.Name + "] 05-flush-to-persistent on " + d.Addr + ": OK",
		} {
			if !strings.Contains(out.String(), w) {
				t.Errorf("no %q in the demo's output:\n%s", w, out.String())
			}
		}
	}
	t.Logf("demo:\n%s", out.String())
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestCExamples runs librpma's own C examples against these ports, as
// processes on one device: C server with Go clients, Go server with C
// clients, and C with C for reference, with the arguments librpma's
// examples/run-all-examples.sh gives them. It is a hand run, not part of
// make test: the C examples are librpma's code, never in this repository,
// so they are built outside it and packed with hack/vm -extra, which names
// their directory in PURERDMA_EXTRA. Without them the test skips.
//
// Build them (tag 1.2.0, the librpma Debian 12 ships, without libpmem:
// every example then uses DRAM) and run, as docs/librpma-mapping.md says:
//
//	go run ./hack/rpma-cexamples -src <git clone of pmem/rpma> -out /tmp/cex
//	go run ./hack/vm test -ctools -extra /tmp/cex -timeout 30m ./cmd/rpma-examples -- -run TestCExamples
//
// make test-native RPMA_SRC=<git clone of pmem/rpma> does both on a host
// (docs/hardware.md).
//
// A binary is named <example>-server or <example>-client.
func TestCExamples(t *testing.T) {
	dir := os.Getenv("PURERDMA_EXTRA")
	if dir == "" {
		t.Skip("librpma's C examples are not in the guest: build them and pass their directory to hack/vm -extra (see the comment)")
	}
	if _, err := os.Stat(filepath.Join(dir, "01-connection-server")); err != nil {
		t.Skipf("no librpma C examples in %s: %v", dir, err)
	}
	goBin := testenv.ProjectTool(t, "rpma-examples")
	hello := []string{"Next value: Hello world!", "Translation: ¡Hola Mundo!"}
	multi := func(ex string) cexCase {
		c := cexCase{name: ex, example: ex, iwarpOK: true, serial: true, serverWant: []string{"Today I have got in touch with:"}}
		for _, s := range []uint32{8, 9, 11, 12} {
			c.clients = append(c.clients, []string{fmt.Sprint(s)})
			c.serverWant = append(c.serverWant, "- "+nameOf(s))
			c.clientWant = append(c.clientWant, []string{"My names is: " + nameOf(s)})
		}
		return c
	}
	pp := func(ex, prefix string) cexCase {
		return cexCase{name: ex, example: ex, iwarpOK: true, clients: [][]string{{"7", "3"}},
			serverWant: []string{prefix + "Value received: 7", prefix + "Value sent: 8"},
			clientWant: [][]string{{prefix + "Value sent: 7", prefix + "Value received: 8"}}}
	}
	srq13 := func(name, timeout string, seeds []string, rounds int) cexCase {
		c := cexCase{name: name, example: "13-messages-ping-pong-with-srq", iwarpOK: true, serverArgs: []string{timeout},
			serverWant: []string{fmt.Sprintf("The client #%d has been connected.", len(seeds)), "Server ended listening."}}
		for _, s := range seeds {
			c.clients = append(c.clients, []string{s, fmt.Sprint(rounds)})
			var v int
			fmt.Sscan(s, &v)
			c.clientWant = append(c.clientWant, []string{fmt.Sprintf("] value sent: %d", v), fmt.Sprintf("] value received: %d", v+rounds)})
		}
		return c
	}
	cases := []cexCase{
		{name: "01", example: "01-connection", iwarpOK: true, clients: [][]string{nil},
			serverWant: []string{"Received a message: Hello server!"}, clientWant: [][]string{{"Received a message: Hello client!"}}},
		{name: "02", example: "02-read-to-volatile", iwarpOK: true, clients: [][]string{nil},
			clientWant: [][]string{{"Read a message: Hello client!"}}},
		{name: "04", example: "04-write-to-persistent", iwarpOK: true, clients: [][]string{nil},
			serverWant: []string{"New value: Hello world!"}, clientWant: [][]string{hello}},
		{name: "05", example: "05-flush-to-persistent", iwarpOK: true, clients: [][]string{nil},
			serverWant: []string{"New value: Hello world!"}, clientWant: [][]string{hello}},
		multi("06-multiple-connections"),
		multi("06scch-multiple-connections"),
		{name: "07", example: "07-atomic-write", iwarpOK: true, clients: [][]string{{"1st_word", "2nd_word", "3rd_word"}},
			serverWant: []string{"1st_word", "2nd_word", "3rd_word"}},
		pp("08-messages-ping-pong", ""),
		pp("08srq-simple-messages-ping-pong-with-srq", ""),
		{name: "10", example: "10-send-with-imm", clients: [][]string{{"1234", "1st_word"}},
			serverWant: []string{"Received value '1st_word' with immediate data '1234'"},
			clientWant: [][]string{{"Sending value '1st_word' with immediate data '1234'"}}},
		{name: "11", example: "11-write-with-imm", clients: [][]string{{"1234"}},
			serverWant: []string{"The value '1234' was written together with immediate data '1234'"}},
		pp("12-receive-completion-queue", ""),
		pp("12scch-receive-completion-queue", ""),
		srq13("13", "3", []string{"1", "5", "10"}, 3),
		// The pairing issue 20 reported: a C server answering two Go
		// clients only once none came for 15 s.
		srq13("13-15s", "15", []string{"1", "5"}, 100),
	}
	for i := range cases {
		if cases[i].name == "12-receive-completion-queue" || cases[i].name == "12scch-receive-completion-queue" {
			cases[i].serverWant = []string{"SERVER: Value received: 7", "SERVER: Value sent: 8"}
			cases[i].clientWant = [][]string{{"CLIENT: Value sent: 7", "CLIENT: Value received: 8"}}
		}
	}
	sides := []struct{ name, server, client string }{
		{"C-C", "C", "C"},
		{"C-server-Go-client", "C", "Go"},
		{"Go-server-C-client", "Go", "C"},
	}
	bin := func(impl, ex, side string) []string {
		if impl == "Go" {
			return []string{goBin, ex, side}
		}
		return []string{filepath.Join(dir, ex+"-"+side)}
	}
	port := 7700
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		for _, c := range cases {
			if d.Driver == "siw" && !c.iwarpOK {
				continue // iWARP has no immediate data
			}
			for _, s := range sides {
				port++
				t.Run(c.name+"/"+s.name, func(t *testing.T) {
					c.run(t, d, fmt.Sprint(port), bin(s.server, c.example, "server"), bin(s.client, c.example, "client"))
				})
			}
		}
	})
}

// cexCase is one example with run-all-examples.sh's arguments.
type cexCase struct {
	name, example string
	iwarpOK       bool // false: immediate data, which iWARP lacks
	serverArgs    []string
	clients       [][]string
	serial        bool // clients one after the other (06); else all at once
	serverWant    []string
	clientWant    [][]string // per client; nil: nothing checked
}

// proc is a finished process.
type proc struct {
	who            string
	err            error
	stdout, stderr string
	took           time.Duration
}

func (p proc) String() string {
	return fmt.Sprintf("%s: %v after %v\nstdout:\n%sstderr:\n%s", p.who, p.err, p.took.Round(time.Millisecond), p.stdout, p.stderr)
}

func runProc(ctx context.Context, argv []string) proc {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	return proc{who: strings.Join(argv, " "), err: err, stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
}

// notListening says a client failed only because the server did not
// listen yet: on RoCE (rxe) the connection is rejected, which C and Go
// print alike; on iWARP (siw) the TCP connect is refused, which librpma
// prints as "rdma_connect() failed: Connection refused" and rpma as
// "connect: CONNECT: connection refused".
func notListening(p proc) bool {
	return p.err != nil && (strings.Contains(p.stderr, "unexpected event: Connection rejected") ||
		strings.Contains(p.stderr, "unexpected event: Connection unreachable") ||
		strings.Contains(strings.ToLower(p.stderr), "connection refused"))
}

func (c cexCase) run(t *testing.T, d testenv.Dev, port string, server, client []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srvDone := make(chan proc, 1)
	go func() { srvDone <- runProc(ctx, append(append(server, d.Addr, port), c.serverArgs...)) }()
	// The servers print nothing when they listen: a client the server
	// rejected for not listening yet tries again. (run-all-examples.sh
	// sleeps a second instead, which a loaded guest may outlast.)
	runClient := func(args []string) proc {
		for {
			p := runProc(ctx, append(append(client, d.Addr, port), args...))
			if !notListening(p) || ctx.Err() != nil {
				return p
			}
			select {
			case r := <-srvDone:
				srvDone <- r
				return p
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	clis := make([]proc, len(c.clients))
	if c.serial {
		for i, a := range c.clients {
			clis[i] = runClient(a)
		}
	} else {
		var wg sync.WaitGroup
		for i, a := range c.clients {
			wg.Go(func() { clis[i] = runClient(a) })
		}
		wg.Wait()
	}
	// The servers end by themselves, 06's and 13's after an idle time.
	var srv proc
	select {
	case srv = <-srvDone:
	case <-time.After(60 * time.Second):
		cancel()
		srv = <-srvDone
		srv.err = fmt.Errorf("did not end within 60 s after its clients: %v", srv.err)
	}
	check := func(p proc, want []string) {
		ok := p.err == nil
		for _, w := range want {
			if !strings.Contains(p.stdout, w) {
				ok = false
			}
		}
		if !ok {
			t.Errorf("want exit 0 and lines %q:\n%v", want, p)
		} else {
			t.Logf("%v", p)
		}
	}
	check(srv, c.serverWant)
	for i, p := range clis {
		var want []string
		if i < len(c.clientWant) {
			want = c.clientWant[i]
		}
		check(p, want)
	}
}

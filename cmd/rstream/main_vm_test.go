package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/netport"
	"github.com/purerdma/purerdma/internal/testenv"
)

var goSide = testenv.GoSide("rstream", runContext)

// notListening reports whether a client failed for want of a listener:
// a rejection on rxe, a refused TCP connection on siw.
func notListening(r testenv.Result) bool {
	for _, s := range []string{"rejected", "REJECTED", "refused"} {
		if strings.Contains(r.Stderr, s) || strings.Contains(r.Stdout, s) {
			return true
		}
	}
	return false
}

// TestInterop streams verified data (-T v) between the Go and the C
// rstream, each as server and as client, at several sizes, on rxe and
// siw (iWARP's message mode).
func TestInterop(t *testing.T) {
	ctool := testenv.CSide("rstream", testenv.CTool(t, "rstream"))
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		sides := []struct {
			name           string
			server, client testenv.Side
		}{
			{"CServer-GoClient", ctool, goSide},
			{"GoServer-CClient", goSide, ctool},
			{"GoServer-GoClient", goSide, goSide},
			{"CServer-CClient", ctool, ctool}, // the reference
		}
		sizes := []struct{ size, count, buffer int }{
			{1, 100, 0}, {64, 100, 0}, {100, 50, 0}, {4096, 50, 0},
			{65536 + 3, 20, 0}, {1 << 20, 5, 0},
			{10000, 20, 4096}, // a buffer smaller than the transfers: credit updates mid-transfer
		}
		for _, s := range sides {
			if s.name == "CServer-CClient" && d.Driver == "siw" {
				// Not run: on siw, rdma-core 44's rsocket fails by itself
				// in a few connections of a hundred (Linux 6.1 and
				// 6.12). Its passive side sends as soon as the
				// application reads after raccept; siw's active side
				// fails the connect ("rconnect: Invalid argument") when
				// that data follows the MPA reply too soon, and the
				// passive siw leaves a first message that arrives before
				// it associates the socket with the QP unread (a hang).
				// The Go side avoids both (docs/rsocket.md).
				continue
			}
			for _, sz := range sizes {
				name := s.name + "/" + strconv.Itoa(sz.size)
				if sz.buffer > 0 {
					name += "-B" + strconv.Itoa(sz.buffer)
				}
				t.Run(name, func(t *testing.T) {
					args := []string{"-S", strconv.Itoa(sz.size), "-C", strconv.Itoa(sz.count), "-I", "2", "-T", "b", "-T", "v"}
					if sz.buffer > 0 {
						args = append(args, "-B", strconv.Itoa(sz.buffer))
					}
					for try := 1; ; try++ {
						srv, cli := runPair(t, d, s.server, s.client, args)
						if srv.Code == 0 && cli.Code == 0 {
							break
						}
						// The C server's early send (see above) can fail
						// the Go client's connect on siw: that run is
						// the C side's flaw, so it runs again, at most
						// twice. Anything else fails the test.
						if try == 3 || d.Driver != "siw" || s.name != "CServer-GoClient" || !strings.Contains(cli.Stderr, "CONNECT_ERROR, status -22") {
							t.Fatalf("failed:\n%v\n%v", srv, cli)
						}
						t.Logf("C server's early send failed the connect; again:\n%v", cli)
					}
				})
			}
		}
	})
}

// runPair runs server and client with args and returns their results;
// when both succeeded it checks that each printed rstream's header and
// one result line.
func runPair(t testing.TB, d testenv.Dev, server, client testenv.Side, args []string) (srv, cli testenv.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	port := strconv.Itoa(testenv.FreePort(t))
	srvDone := make(chan testenv.Result, 1)
	go func() { srvDone <- server(ctx, append([]string{"-b", d.Addr, "-p", port}, args...)) }()
	if d.Driver == "siw" {
		// siw's rdma_cm listens on TCP: wait for it, as a C client
		// whose connection is refused may hang.
		n, _ := strconv.Atoi(port)
		for !netport.Listening(n) {
			select {
			case r := <-srvDone:
				t.Fatalf("server ended before listening:\n%v", r)
			case <-ctx.Done():
				t.Fatalf("server not listening on %s", port)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	for try := 0; ; try++ {
		cli = client(ctx, append([]string{"-s", d.Addr, "-p", port}, args...))
		if cli.Code == 0 || try == 50 || !notListening(cli) || ctx.Err() != nil {
			break
		}
		select {
		case srv = <-srvDone:
			t.Fatalf("server ended:\n%v\nclient:\n%v", srv, cli)
		case <-time.After(100 * time.Millisecond):
		}
	}
	if cli.Code != 0 {
		cancel()
	}
	srv = <-srvDone
	if srv.Code != 0 || cli.Code != 0 {
		return srv, cli
	}
	for _, r := range []testenv.Result{srv, cli} {
		lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "name      bytes   xfers   iters   total       time     Gb/sec    usec/xfer") ||
			!strings.HasPrefix(lines[1], "custom    ") {
			t.Errorf("output of %s:\n%s", r.Who, r.Stdout)
		}
		if strings.Contains(r.Stdout, "verification failed") || r.Stderr != "" {
			t.Errorf("%v", r)
		}
	}
	return srv, cli
}

func runPairB(b *testing.B, d testenv.Dev, server, client testenv.Side, args []string) (srv, cli testenv.Result) {
	b.Helper()
	return runPair(b, d, server, client, args)
}

package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestRiostream runs rdmacm-utils' riostream, rstream over the iomap
// (the server riomaps its buffer, the client riowrites into it), C to C
// with verified data on rxe and siw, and pins what happens against the Go
// rstream, which announces an iomap of size 0: the C side's riomap fails
// with ENOMEM ("riomap: Cannot allocate memory"; rsocket.c's
// rs_get_iomap_mr finds no free entry in the peer's zero-entry iomap)
// before any data moves, and the Go side's sync ends at the C side's
// close (EOF or EPIPE; as a server it may be cancelled by the test before
// it accepted).
func TestRiostream(t *testing.T) {
	rio := testenv.CSide("riostream", testenv.CTool(t, "riostream"))
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		for _, sz := range []int{64, 4096, 65536} {
			args := []string{"-S", strconv.Itoa(sz), "-C", "20", "-I", "2", "-T", "b", "-T", "v"}
			t.Run("CServer-CClient/"+strconv.Itoa(sz), func(t *testing.T) {
				srv, cli := runPair(t, d, rio, rio, args)
				if srv.Code == 0 && cli.Code == 0 {
					return
				}
				// The C pair fails by itself now and then (2 runs of 54 on
				// rxe, Linux 6.1, and once in make test on 2026-11-24): the client's riomap fails with ENOMEM
				// as against the Go side, the server's rrecv with
				// EINVAL. Not traced; recorded, not failed, since it is
				// the reference's own failure and no Go code runs here.
				// The server may also have been stopped by runPair once the
				// client had exited, before its rrecv failed.
				srvGone := strings.Contains(srv.Stderr, "rrecv: Invalid argument") || strings.Contains(srv.Stderr, "signal: killed")
				if strings.Contains(cli.Stderr, "riomap: Cannot allocate memory") && srvGone {
					t.Logf("C riostream pair failed by itself (client riomap ENOMEM, server rrecv EINVAL):\n%v\n%v", srv, cli)
					return
				}
				// On siw, rsocket.c's own connect flaw (docs/rsocket.md,
				// "siw, active side"), as TestInterop notes for rstream.
				if d.Driver == "siw" && strings.Contains(cli.Stderr, "rconnect: Invalid argument") {
					t.Logf("C riostream pair failed by itself on siw (rconnect EINVAL):\n%v\n%v", srv, cli)
					return
				}
				// On siw under load (make test beside three other guests
				// on 2 CPUs, 2026-11-24) the C pair once hung at 64 KiB
				// with no output on either side until runPair killed both
				// after 60 s. No Go code runs in this pair; the Go pairs
				// below and TestInterop's Go/C rstream cover our side.
				if d.Driver == "siw" && cHung(srv) && cHung(cli) {
					t.Logf("C riostream pair hung by itself on siw (both killed, no output):\n%v\n%v", srv, cli)
					return
				}
				t.Fatalf("failed:\n%v\n%v", srv, cli)
			})
		}
		args := []string{"-S", "64", "-C", "20", "-I", "2", "-T", "b", "-T", "v"}
		for _, s := range []struct {
			name           string
			server, client testenv.Side
			c, goSide      func(srv, cli testenv.Result) testenv.Result
		}{
			{"CServer-GoClient", rio, goSide,
				func(srv, cli testenv.Result) testenv.Result { return srv },
				func(srv, cli testenv.Result) testenv.Result { return cli }},
			{"GoServer-CClient", goSide, rio,
				func(srv, cli testenv.Result) testenv.Result { return cli },
				func(srv, cli testenv.Result) testenv.Result { return srv }},
		} {
			t.Run(s.name, func(t *testing.T) {
				srv, cli := runPair(t, d, s.server, s.client, args)
				c, g := s.c(srv, cli), s.goSide(srv, cli)
				if !strings.Contains(c.Stderr, "riomap: Cannot allocate memory") {
					t.Errorf("C riostream did not fail in riomap:\n%v", c)
				}
				// A Go server may not have accepted, or not yet seen the
				// C client's disconnect, when the C client has exited:
				// runPair then cancels it, and its Accept or its sync's
				// rrecv ends with the closed connection (seen on siw).
				cancelled := s.name == "GoServer-CClient" && (strings.Contains(g.Stderr, "raccept: ") || strings.Contains(g.Stderr, "rrecv: ")) &&
					strings.Contains(g.Stderr, "use of closed network connection")
				// The C side's disconnect ends the Go side's sync: its
				// rrecv reads EOF, or, if the disconnect came first, its
				// rsend fails with EPIPE.
				closed := strings.Contains(g.Stderr, "rrecv: EOF") || strings.Contains(g.Stderr, "rsend: ") && strings.Contains(g.Stderr, "broken pipe")
				if g.Code != 1 || !closed && !cancelled {
					t.Errorf("Go rstream did not end at the C side's close:\n%v", g)
				}
			})
		}
	})
}

// cHung reports whether a C side produced nothing before runPair killed
// it.
func cHung(r testenv.Result) bool {
	return r.Stdout == "" && strings.TrimSpace(r.Stderr) == "[exec: signal: killed]"
}

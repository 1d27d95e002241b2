package main

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/netport"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/uverbs"
)

var goSide = testenv.GoSide("udpingpong", runContext)

func cSide(path string) testenv.Side { return testenv.CSide("ibv_ud_pingpong", path) }

// addrLine matches the address lines of both programs.
var addrLine = regexp.MustCompile(`(?m)^  (local|remote) address: {1,2}LID (0x[0-9a-f]{4}), QPN (0x[0-9a-f]{6}), PSN (0x[0-9a-f]{6})[,:] GID (\S+)$`)

// addrs returns the "LID, QPN, PSN, GID" parts of the local and remote
// lines.
func addrs(t *testing.T, r testenv.Result) (local, remote string) {
	t.Helper()
	m := addrLine.FindAllStringSubmatch(r.Stdout, -1)
	if len(m) != 2 || m[0][1] != "local" || m[1][1] != "remote" {
		t.Fatalf("want a local and a remote address line:\n%v", r)
	}
	return strings.Join(m[0][2:], " "), strings.Join(m[1][2:], " ")
}

// TestPingpongRXE runs ping-pongs of UD datagrams between the Go and C
// tools, both ways, on rxe. The Go side replies through an address made
// from the first datagram's GRH, so a C peer's datagrams check
// AHAttrFromWC.
func TestPingpongRXE(t *testing.T) {
	d := testenv.Device(t, "rxe")
	ctool := cSide(testenv.CTool(t, "ibv_ud_pingpong"))
	uc, err := uverbs.OpenName(d.Name)
	if err != nil {
		t.Fatal(err)
	}
	gidx, err := uc.GIDIndex(1, netip.MustParseAddr(d.Addr))
	uc.Close()
	if err != nil {
		t.Fatal(err)
	}
	const iters, size = 200, 1024 // within rxe's active MTU
	tests := []struct {
		name           string
		server, client testenv.Side
		serverArgs     []string // besides the common ones
		clientArgs     []string
	}{
		{"GoServer-CClient", goSide, ctool, nil, nil},
		{"CServer-GoClient", ctool, goSide, nil, nil},
		{"GoServer-GoClient", goSide, goSide, nil, nil},
		{"GoServer-CClient-events", goSide, ctool, []string{"-e"}, []string{"-e"}},
		{"CServer-GoClient-events", ctool, goSide, []string{"-e"}, []string{"-e"}},
		{"GoServer-GoClient-events", goSide, goSide, []string{"-e"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			port := testenv.FreePort(t)
			common := []string{"-d", d.Name, "-g", strconv.Itoa(gidx), "-n", strconv.Itoa(iters), "-s", strconv.Itoa(size), "-p", strconv.Itoa(port)}
			srvDone := make(chan testenv.Result, 1)
			go func() { srvDone <- tt.server(ctx, append(append([]string{}, common...), tt.serverArgs...)) }()

			var srv testenv.Result
			for !netport.Listening(port) {
				select {
				case srv = <-srvDone:
					t.Fatalf("server ended before listening:\n%v", srv)
				case <-time.After(10 * time.Millisecond):
				}
			}
			cli := tt.client(ctx, append(append(append([]string{}, common...), tt.clientArgs...), "127.0.0.1"))
			if cli.Code != 0 {
				cancel() // the server would wait for the client forever
			}
			srv = <-srvDone
			if srv.Code != 0 || cli.Code != 0 {
				t.Fatalf("failed:\n%v\n%v", srv, cli)
			}
			t.Logf("server:\n%s", srv.Stdout)
			t.Logf("client:\n%s", cli.Stdout)

			sl, sr := addrs(t, srv)
			cl, cr := addrs(t, cli)
			if sl != cr || cl != sr {
				t.Errorf("address lines disagree: server local %q remote %q, client local %q remote %q", sl, sr, cl, cr)
			}
			wantGID := "::ffff:" + d.Addr
			for _, a := range []string{sl, cl} {
				if !strings.HasSuffix(a, " "+wantGID) {
					t.Errorf("address %q does not end in GID %s", a, wantGID)
				}
			}
			for _, r := range []testenv.Result{srv, cli} {
				for _, want := range []string{
					fmt.Sprintf("%d bytes in ", 2*iters*size),
					fmt.Sprintf("%d iters in ", iters),
				} {
					if !strings.Contains(r.Stdout, "\n"+want) {
						t.Errorf("no line %q...:\n%v", want, r)
					}
				}
				if r.Stderr != "" {
					t.Errorf("unexpected output on stderr:\n%v", r)
				}
			}
			statLines := regexp.MustCompile(`(?m)^\d+ bytes in \d+\.\d\d seconds = \d+\.\d\d Mbit/sec\n\d+ iters in \d+\.\d\d seconds = \d+\.\d\d usec/iter\n`)
			for _, r := range []testenv.Result{srv, cli} {
				if !statLines.MatchString(r.Stdout) {
					t.Errorf("statistics lines malformed:\n%v", r)
				}
			}
		})
	}
}

// With no server the client fails as the C one does, after printing its
// local address. (-s 1024: the default 2048 is past rxe's active MTU, which
// both tools refuse before anything else.)
func TestClientNoServerRXE(t *testing.T) {
	d := testenv.Device(t, "rxe")
	ctool := cSide(testenv.CTool(t, "ibv_ud_pingpong"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	port := testenv.FreePort(t)
	args := []string{"-d", d.Name, "-s", "1024", "-p", strconv.Itoa(port), "127.0.0.1"}
	want := fmt.Sprintf("Couldn't connect to 127.0.0.1:%d", port)
	for _, s := range []testenv.Side{goSide, ctool} {
		r := s(ctx, args)
		if r.Code != 1 || !strings.HasPrefix(r.Stderr, want) || !strings.HasPrefix(r.Stdout, "  local address:  LID 0x0000, QPN 0x") {
			t.Errorf("want exit 1, stderr %q...:\n%v", want, r)
		}
	}
}

// A message past the port's active MTU is refused by both tools alike.
func TestSizePastMTURXE(t *testing.T) {
	d := testenv.Device(t, "rxe")
	ctool := cSide(testenv.CTool(t, "ibv_ud_pingpong"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, s := range []testenv.Side{goSide, ctool} {
		r := s(ctx, []string{"-d", d.Name, "-s", "8192", "127.0.0.1"})
		if r.Code != 1 || !strings.HasPrefix(r.Stderr, "Requested size larger than port MTU (") {
			t.Errorf("want exit 1, stderr \"Requested size larger than port MTU (...\":\n%v", r)
		}
	}
}

package main

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/netport"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/uverbs"
)

var goSide = testenv.GoSide("srqpingpong", runContext)

func cSide(path string) testenv.Side { return testenv.CSide("ibv_srq_pingpong", path) }

// addrLine matches the address lines of both programs.
var addrLine = regexp.MustCompile(`(?m)^  (local|remote) address: {1,2}LID (0x[0-9a-f]{4}), QPN (0x[0-9a-f]{6}), PSN (0x[0-9a-f]{6}), GID (\S+)$`)

// addrs returns the "LID, QPN, PSN, GID" parts of the local and remote
// lines, one per QP, locals first.
func addrs(t *testing.T, r testenv.Result, n int) (local, remote []string) {
	t.Helper()
	m := addrLine.FindAllStringSubmatch(r.Stdout, -1)
	if len(m) != 2*n {
		t.Fatalf("want %d local and %d remote address lines:\n%v", n, n, r)
	}
	for i, l := range m {
		want := "local"
		if i >= n {
			want = "remote"
		}
		if l[1] != want {
			t.Fatalf("line %d is %s, want %s:\n%v", i, l[1], want, r)
		}
		if i < n {
			local = append(local, strings.Join(l[2:], " "))
		} else {
			remote = append(remote, strings.Join(l[2:], " "))
		}
	}
	return local, remote
}

// TestPingpongRXE bounces messages over several RC QPs fed by one SRQ,
// between the Go and C tools both ways on rxe.
func TestPingpongRXE(t *testing.T) {
	d := testenv.Device(t, "rxe")
	ctool := cSide(testenv.CTool(t, "ibv_srq_pingpong"))
	uc, err := uverbs.OpenName(d.Name)
	if err != nil {
		t.Fatal(err)
	}
	gidx, err := uc.GIDIndex(1, netip.MustParseAddr(d.Addr))
	uc.Close()
	if err != nil {
		t.Fatal(err)
	}
	const iters, size, qps = 200, 4096, 4
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			port := testenv.FreePort(t)
			common := []string{"-d", d.Name, "-g", strconv.Itoa(gidx), "-n", strconv.Itoa(iters), "-s", strconv.Itoa(size), "-q", strconv.Itoa(qps), "-p", strconv.Itoa(port)}
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

			sl, sr := addrs(t, srv, qps)
			cl, cr := addrs(t, cli, qps)
			if !slices.Equal(sl, cr) || !slices.Equal(cl, sr) {
				t.Errorf("address lines disagree: server local %q remote %q, client local %q remote %q", sl, sr, cl, cr)
			}
			wantGID := "::ffff:" + d.Addr
			for _, a := range append(sl, cl...) {
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
// local address.
func TestClientNoServerRXE(t *testing.T) {
	d := testenv.Device(t, "rxe")
	ctool := cSide(testenv.CTool(t, "ibv_srq_pingpong"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	port := testenv.FreePort(t)
	args := []string{"-d", d.Name, "-p", strconv.Itoa(port), "127.0.0.1"}
	want := fmt.Sprintf("Couldn't connect to 127.0.0.1:%d", port)
	for _, s := range []testenv.Side{goSide, ctool} {
		r := s(ctx, args)
		if r.Code != 1 || !strings.HasPrefix(r.Stderr, want) || !strings.HasPrefix(r.Stdout, "  local address:  LID 0x0000, QPN 0x") {
			t.Errorf("want exit 1, stderr %q...:\n%v", want, r)
		}
	}
}

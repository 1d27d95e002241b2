package main

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cmd/internal/pingpong/pptest"
	"github.com/purerdma/purerdma/internal/testenv"
)

var goSide = testenv.GoSide("udpingpong", runContext)

func cSide(path string) testenv.Side { return testenv.CSide("ibv_ud_pingpong", path) }

// TestPingpongRXE runs ping-pongs of UD datagrams between the Go and C
// tools, both ways, on rxe. The Go side replies through an address made
// from the first datagram's GRH, so a C peer's datagrams check
// AHAttrFromWC.
func TestPingpongRXE(t *testing.T) {
	d := testenv.RoCE(t)
	ctool := cSide(testenv.CTool(t, "ibv_ud_pingpong"))
	gidx := pptest.GIDIndex(t, d)
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
			srv, cli := pptest.Pair(ctx, cancel, t, port,
				tt.server, slices.Concat(common, tt.serverArgs), tt.client, slices.Concat(common, tt.clientArgs))
			pptest.CheckPair(t, d, srv, cli, 1, iters, size)
		})
	}
}

// With no server the client fails as the C one does, after printing its
// local address. (-s 1024: the default 2048 is past rxe's active MTU, which
// both tools refuse before anything else.)
func TestClientNoServerRXE(t *testing.T) {
	d := testenv.RoCE(t)
	pptest.CheckNoServer(t, d, []testenv.Side{goSide, cSide(testenv.CTool(t, "ibv_ud_pingpong"))}, "-s", "1024")
}

// A message past the port's active MTU is refused by both tools alike.
func TestSizePastMTURXE(t *testing.T) {
	d := testenv.RoCE(t)
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

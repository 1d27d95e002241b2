package main

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cmd/internal/pingpong/pptest"
	"github.com/purerdma/purerdma/internal/testenv"
)

var goSide = testenv.GoSide("srqpingpong", runContext)

func cSide(path string) testenv.Side { return testenv.CSide("ibv_srq_pingpong", path) }

// TestPingpongRXE bounces messages over several RC QPs fed by one SRQ,
// between the Go and C tools both ways on rxe.
func TestPingpongRXE(t *testing.T) {
	d := testenv.RoCE(t)
	ctool := cSide(testenv.CTool(t, "ibv_srq_pingpong"))
	gidx := pptest.GIDIndex(t, d)
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
			srv, cli := pptest.Pair(ctx, cancel, t, port,
				tt.server, slices.Concat(common, tt.serverArgs), tt.client, slices.Concat(common, tt.clientArgs))
			pptest.CheckPair(t, d, srv, cli, qps, iters, size)
		})
	}
}

// With no server the client fails as the C one does, after printing its
// local address.
func TestClientNoServerRXE(t *testing.T) {
	d := testenv.RoCE(t)
	pptest.CheckNoServer(t, d, []testenv.Side{goSide, cSide(testenv.CTool(t, "ibv_srq_pingpong"))})
}

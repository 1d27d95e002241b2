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

var goSide = testenv.GoSide("rcpingpong", runContext)

func cSide(path string) testenv.Side { return testenv.CSide("ibv_rc_pingpong", path) }

func TestPingpongRXE(t *testing.T) {
	d := testenv.RoCE(t)
	ctool := cSide(testenv.CTool(t, "ibv_rc_pingpong"))
	gidx := pptest.GIDIndex(t, d)
	const iters, size = 200, 4096
	tests := []struct {
		name           string
		server, client testenv.Side
		serverArgs     []string // besides the common ones
		clientArgs     []string
		// invalid: the server reports page 0. With -c the C client
		// writes 0 at the start of each page (i / page_size %
		// sizeof(char)), the server checks for 0 there; a client
		// without -c sends its buffer as allocated, all 0x7b.
		invalid bool
	}{
		{"GoServer-CClient", goSide, ctool, []string{"-c"}, []string{"-c"}, false},
		{"CServer-GoClient", ctool, goSide, []string{"-c"}, []string{"-c"}, false},
		{"GoServer-GoClient", goSide, goSide, []string{"-c"}, []string{"-c"}, false},
		{"GoServer-CClient-events", goSide, ctool, []string{"-c", "-e"}, []string{"-c", "-e"}, false},
		{"CServer-GoClient-events", ctool, goSide, []string{"-c", "-e"}, []string{"-c", "-e"}, false},
		{"GoServer-GoClient-events", goSide, goSide, []string{"-c", "-e"}, []string{"-c"}, false},
		{"GoServer-CClient-unchecked", goSide, ctool, []string{"-c"}, nil, true},
		{"CServer-GoClient-unchecked", ctool, goSide, []string{"-c"}, nil, true},
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
			if got := strings.Contains(srv.Stdout, "\ninvalid data in page 0\n"); got != tt.invalid {
				t.Errorf("server reported invalid data: %v, want %v:\n%v", got, tt.invalid, srv)
			}
			if strings.Contains(cli.Stdout, "invalid data") {
				t.Errorf("the client validated:\n%v", cli)
			}
		})
	}
}

// With no server the client fails as the C one does, after printing its
// local address.
func TestClientNoServerRXE(t *testing.T) {
	d := testenv.RoCE(t)
	pptest.CheckNoServer(t, d, []testenv.Side{goSide, cSide(testenv.CTool(t, "ibv_rc_pingpong"))})
}

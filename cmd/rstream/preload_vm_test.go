package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
)

// rspreload is librdmacm1's LD_PRELOAD library; hack/vm packs it with the
// C tools at the same path.
const rspreload = "/usr/lib/x86_64-linux-gnu/rsocket/librspreload.so"

// preloadSide runs the C rstream in sockets mode (-T s: plain socket,
// connect, send, recv) with librspreload preloaded, which turns those
// calls into rsockets: an ordinary TCP program speaking rsockets.
func preloadSide(path string) testenv.Side {
	return func(ctx context.Context, args []string) testenv.Result {
		args = append(args, "-T", "s")
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, path, args...)
		cmd.Env = append(os.Environ(), "LD_PRELOAD="+rspreload)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		code := 0
		if err := cmd.Run(); err != nil {
			code = -1
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			if ctx.Err() != nil {
				fmt.Fprintf(&stderr, "[exec: %v]", err)
			}
		}
		return testenv.Result{Who: "LD_PRELOAD=librspreload.so C rstream " + strings.Join(args, " "), Code: code, Stdout: stdout.String(), Stderr: stderr.String()}
	}
}

// TestPreload streams verified data between the Go rstream (rsockets)
// and the C rstream in TCP sockets mode under LD_PRELOAD=librspreload.so,
// each as server and as client. librspreload falls back to TCP when
// rconnect fails, but the Go side listens and connects with rsockets
// only, so a pass means the C side's socket calls went over RDMA.
func TestPreload(t *testing.T) {
	path := testenv.CTool(t, "rstream")
	if _, err := os.Stat(rspreload); err != nil {
		t.Fatalf("librspreload not in the image: %v", err)
	}
	c := preloadSide(path)
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		for _, s := range []struct {
			name           string
			server, client testenv.Side
		}{
			{"GoServer-PreloadClient", goSide, c},
			{"PreloadServer-GoClient", c, goSide},
		} {
			for _, sz := range []struct{ size, count int }{{64, 100}, {4096, 50}, {1 << 20, 5}} {
				t.Run(s.name+"/"+strconv.Itoa(sz.size), func(t *testing.T) {
					args := []string{"-S", strconv.Itoa(sz.size), "-C", strconv.Itoa(sz.count), "-I", "2", "-T", "b", "-T", "v"}
					srv, cli := runPair(t, d, s.server, s.client, args)
					if srv.Code != 0 || cli.Code != 0 {
						if s.name == "GoServer-PreloadClient" && d.Driver == "siw" && siwPassiveHang(srv, cli) {
							t.Skipf("not a pass: the C client hung in siw's passive-side window (docs/rsocket.md, \"a message before the socket is the QP's waits\"; a C active side sends no kick):\n%v\n%v", srv, cli)
						}
						t.Fatalf("failed:\n%v\n%v", srv, cli)
					}
				})
			}
		}
	})
}

// siwPassiveHang tells the known hang of a Go server with a C client on
// siw from other failures: the kernel's siw_accept sends the MPA reply
// before it ties the socket to the QP, and a C client's first message
// that lands in between waits in the socket until more data comes,
// which a C active side never sends (the Go active side sends a kick,
// rsocket's kickDelay). Its signature: the Go server took the connection
// and read nothing until runPair's timeout closed it, and the C client
// was still waiting then. It came 2 times in 6 pairs while three guests
// shared the 2 host cores; not in the earlier make test runs.
func siwPassiveHang(srv, cli testenv.Result) bool {
	onlyHeader := strings.Count(srv.Stdout, "\n") <= 1
	return onlyHeader && strings.Contains(srv.Stderr, "rrecv: ") && strings.Contains(srv.Stderr, "use of closed network connection") &&
		strings.Contains(cli.Stderr, "signal: killed")
}

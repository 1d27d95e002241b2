package twohost_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestRping runs rping's server in guest a and its client in guest b,
// the Go port and rdma-core's C tool in every combination, with -V (both
// sides verify the data). -short keeps the two interop directions.
func TestRping(t *testing.T) {
	testenv.RequirePair(t)
	goRping := testenv.CSide("rping (Go)", testenv.ProjectTool(t, "rping"))
	cRping := testenv.CSide("rping (C)", testenv.CTool(t, "rping"))
	type rpingCase struct {
		name           string
		server, client testenv.Side
	}
	tests := []rpingCase{
		{"GoServer-CClient", goRping, cRping},
		{"CServer-GoClient", cRping, goRping},
	}
	if !testing.Short() {
		tests = append(tests,
			rpingCase{"GoServer-GoClient", goRping, goRping},
			rpingCase{"CServer-CClient", cRping, cRping}, // the reference
		)
	}
	const count, size = 20, 256
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := begin(t)
			args := []string{"-a", serverAddr(p), "-p", strconv.Itoa(7480 + i), "-V", "-v", "-C", strconv.Itoa(count), "-S", strconv.Itoa(size)}
			r := runTool(p, tt.server, tt.client, append([]string{"-s"}, args...), append([]string{"-c"}, args...))
			if r.Code != 0 {
				t.Fatalf("guest %s:\n%v", p.Name, r)
			}
			prefix := "ping data: "
			if p.Server() {
				prefix = "server ping data: "
			}
			if n := strings.Count(r.Stdout, prefix); n != count {
				t.Errorf("guest %s: %d lines %q, want %d:\n%v", p.Name, n, prefix, count, r)
			}
			t.Logf("guest %s (%s) on %s, peer %s at %s:\n%v", p.Name, p.Role, p.Dev.Addr, p.PeerName, p.Peer, r)
		})
	}
}

// serverAddr is the server guest's address on the wire.
func serverAddr(p *side) string {
	if p.Server() {
		return p.Dev.Addr
	}
	return p.Peer
}

// runTool runs a server tool in the server guest and a client tool in the
// client guest, each with its arguments, and returns this side's result. The client retries while the server is not listening
// yet; a server whose client gave up is stopped.
func runTool(p *side, server, client testenv.Side, serverArgs, clientArgs []string) testenv.Result {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if p.Server() {
		done := make(chan testenv.Result, 1)
		go func() { done <- server(ctx, serverArgs) }()
		p.send("started", "")
		peer := p.recvAsync("done")
		var r testenv.Result
		select {
		case r = <-done:
			if res := <-peer; res.err != nil {
				p.t.Errorf("guest %s: %v", p.PeerName, res.err)
			}
		case res := <-peer:
			if res.err != nil || res.val != "0" {
				cancel() // the server would wait for its client forever
			}
			r = <-done
		}
		return r
	}
	p.recv("started")
	var r testenv.Result
	for try := 0; ; try++ {
		r = client(ctx, clientArgs)
		if r.Code == 0 || try == 100 || !notListening(r) || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.send("done", strconv.Itoa(r.Code))
	return r
}

// notListening reports whether the client failed for want of a listener:
// rxe rejects a connection to a port nobody listens on.
func notListening(r testenv.Result) bool {
	for _, s := range []string{"cma event RDMA_CM_EVENT_", "REJECTED", "rejected", "UNREACHABLE", "The retry number exceeded"} {
		if strings.Contains(r.Stderr, s) {
			return true
		}
	}
	return false
}

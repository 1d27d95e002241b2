package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/purerdma/purerdma/internal/netport"
)

// compare runs every side, Go's as C's, as a process of its own: a server
// and a client that share one Go runtime (its Ps, its GC, its scheduler)
// would not be measured as perftest's two processes are. The Go side is
// the rperf program (-rperf), as the C side is perftest's.

// The two stacks compare measures.
const (
	stackGo = "Go"
	stackC  = "C"
)

// childOut is a program's outcome.
type childOut struct {
	err            error
	stdout, stderr string
}

// program is what runs one side.
type program struct {
	path string
	args []string
	env  []string // added to the environment
}

// start runs p in the background; stdout, when not nil, also receives its
// output as it comes (lineWatch waits for "listening").
func (p program) start(ctx context.Context, stdout io.Writer) <-chan childOut {
	ch := make(chan childOut, 1)
	go func() {
		var o, e bytes.Buffer
		cmd := exec.CommandContext(ctx, p.path, p.args...)
		cmd.Env = append(os.Environ(), p.env...)
		cmd.Stdout, cmd.Stderr = &o, &e
		if stdout != nil {
			cmd.Stdout = io.MultiWriter(&o, stdout)
		}
		err := cmd.Run()
		ch <- childOut{err, o.String(), e.String()}
	}()
	return ch
}

// serverClient runs srv, then cli once srv is listening, and returns the
// client's outcome. An error names the side that
// failed: srvName or cliName.
func serverClient(ctx context.Context, srvName, cliName string, srv, cli program, srvOut io.Writer, listening <-chan struct{}) (childOut, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sc := srv.start(ctx, srvOut)
	select {
	case <-listening:
	case s := <-sc:
		return childOut{}, fmt.Errorf("%s server ended before listening: %v: %s", srvName, s.err, lastLine(s.stderr))
	case <-ctx.Done():
		return childOut{}, fmt.Errorf("%s server did not listen: %v", srvName, ctx.Err())
	}
	c := <-cli.start(ctx, nil)
	if c.err != nil {
		cancel()
	}
	s := <-sc
	if c.err != nil {
		return c, fmt.Errorf("%s client: %v: %s", cliName, c.err, lastLine(c.stderr))
	}
	if s.err != nil {
		return c, fmt.Errorf("%s server: %v: %s", srvName, s.err, lastLine(s.stderr))
	}
	return c, nil
}

// portListening is closed once a TCP listener holds port.
func portListening(ctx context.Context, port int) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		for !netport.Listening(port) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
		close(ch)
	}()
	return ch
}

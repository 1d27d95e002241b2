package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/netport"
)

// Result is what one run of a tool printed, for the interop tests that
// run a Go port against rdma-core's C tool.
type Result struct {
	Who            string // the tool and its arguments
	Code           int    // exit code; -1 when it did not exit normally
	Stdout, Stderr string
}

func (r Result) String() string {
	return fmt.Sprintf("%s exited %d\nstdout:\n%s\nstderr:\n%s", r.Who, r.Code, r.Stdout, r.Stderr)
}

// Side runs one end of an interop test with the given arguments.
type Side func(ctx context.Context, args []string) Result

// GoSide runs a Go port in-process through its run function.
func GoSide(name string, run func(ctx context.Context, args []string, stdout, stderr io.Writer) int) Side {
	return func(ctx context.Context, args []string) Result {
		var stdout, stderr bytes.Buffer
		code := run(ctx, args, &stdout, &stderr)
		return Result{"Go " + name + " " + strings.Join(args, " "), code, stdout.String(), stderr.String()}
	}
}

// CSide runs the C tool at path (see CTool) until it exits or ctx ends.
func CSide(name, path string) Side {
	return func(ctx context.Context, args []string) Result {
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, path, args...)
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
		return Result{"C " + name + " " + strings.Join(args, " "), code, stdout.String(), stderr.String()}
	}
}

// FreePort returns a TCP port that was free a moment ago, for a server the
// test starts.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := netport.Free()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// StartSelf runs this test binary again as a child process that runs no
// test (-test.run=^$) with env (KEY=value) added, so that its TestMain
// plays a peer that a test can kill; its stderr is the test's. It returns
// the command and the child's stdout, which the caller reads in its own
// goroutine (goroutine counts then see none of exec's). The child is
// killed and waited for when the test ends.
func StartSelf(t testing.TB, env ...string) (*exec.Cmd, io.Reader) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, out
}

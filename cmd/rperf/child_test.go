package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for rperf when compare
// re-executes itself (program.start with no path).
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestServerClient(t *testing.T) {
	sh := func(script string) program { return program{path: "/bin/sh", args: []string{"-c", script}} }
	for _, tc := range []struct {
		name     string
		srv, cli program
		out      string // the client's stdout
		err      string // in the error, "" for none
		stderr   string // in the client's stderr
	}{
		{"both succeed", sh("echo listening; sleep 0.1"), sh("echo hello"), "hello\n", "", ""},
		{"server ends first", sh("echo nope >&2; exit 3"), sh("echo hello"), "", "S server ended before listening: exit status 3: nope", ""},
		{"client fails", sh("echo listening; sleep 0.1"), sh("echo bad >&2; exit 4"), "", "C client: exit status 4: bad", ""},
		{"server fails after", sh("echo listening; echo late >&2; exit 5"), sh("sleep 0.1"), "", "S server: exit status 5: late", ""},
		{"rperf re-executed", sh("echo listening"), goProgram("no_such_test"), "", "C client: exit status 1", `rperf: unknown test "no_such_test"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			w := &lineWatch{ready: make(chan struct{})}
			out, err := serverClient(ctx, "S", "C", tc.srv, tc.cli, w, w.ready)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one with %q", err, tc.err)
			case tc.err == "" && out.stdout != tc.out:
				t.Errorf("stdout %q, want %q", out.stdout, tc.out)
			}
			if !strings.Contains(out.stderr, tc.stderr) {
				t.Errorf("client's stderr %q, want %q in it", out.stderr, tc.stderr)
			}
		})
	}
}

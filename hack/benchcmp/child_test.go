package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeArg makes the test binary a scripted program for TestServerClient,
// so that the test needs no shell (the VM's image has none).
const fakeArg = "-rperf-fake-program"

// TestMain lets the test binary play a fake program.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == fakeArg {
		os.Exit(fake(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// fake runs steps: out:TEXT and err:TEXT print a line, env:NAME prints
// the variable, sleep:DURATION waits, exit:N ends.
func fake(steps []string) int {
	for _, s := range steps {
		verb, arg, _ := strings.Cut(s, ":")
		switch verb {
		case "out":
			fmt.Println(arg)
		case "err":
			fmt.Fprintln(os.Stderr, arg)
		case "env":
			fmt.Println(os.Getenv(arg))
		case "sleep":
			d, _ := time.ParseDuration(arg)
			time.Sleep(d)
		case "exit":
			n, _ := strconv.Atoi(arg)
			return n
		}
	}
	return 0
}

func TestServerClient(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := func(steps ...string) program { return program{path: self, args: append([]string{fakeArg}, steps...)} }
	for _, tc := range []struct {
		name     string
		srv, cli program
		out      string // the client's stdout
		err      string // in the error, "" for none
		stderr   string // in the client's stderr
	}{
		{"both succeed", script("out:listening", "sleep:100ms"), script("out:hello"), "hello\n", "", ""},
		{"server ends first", script("err:nope", "exit:3"), script("out:hello"), "", "S server ended before listening: exit status 3: nope", ""},
		{"client fails", script("out:listening", "sleep:100ms"), script("err:bad", "exit:4"), "", "C client: exit status 4: bad", "bad"},
		{"server fails after", script("out:listening", "err:late", "exit:5"), script("sleep:100ms"), "", "S server: exit status 5: late", ""},
		{"no such program", script("out:listening"), program{path: filepath.Join(t.TempDir(), "rperf")}, "", "C client: fork/exec", ""},
		{"environment added", script("out:listening"), withEnv(script("env:GOMAXPROCS"), "GOMAXPROCS=1"), "1\n", "", ""},
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

func withEnv(p program, env ...string) program {
	p.env = env
	return p
}

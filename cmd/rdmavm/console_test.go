//go:build linux

package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestConsole feeds the console lines of guests as init prints them:
// the program's own lines go to stdout, the rest is kept for stderr, and
// the exit status comes from init's line after the program.
func TestConsole(t *testing.T) {
	for _, tc := range []struct {
		name     string
		guests   int
		lines    string
		stdout   string
		code     int
		complete bool
	}{
		{
			name:   "passes",
			guests: 1,
			lines: "[    0.5] rdma_rxe: loaded\npurerdma-vm: amd64 guest up in 1s: rxe0\n" +
				"=== purerdma-vm: run p.test (amd64, Linux 6.1.0-56-amd64)\n=== RUN   TestX\n--- PASS: TestX (0.00s)\nPASS\n" +
				"=== purerdma-vm: p.test exit 0 (amd64, Linux 6.1.0-56-amd64, 20ms)\npurerdma-vm: exit status 0\n",
			stdout:   "=== RUN   TestX\n--- PASS: TestX (0.00s)\nPASS\n",
			code:     0,
			complete: true,
		},
		{
			name:   "fails with its own status",
			guests: 1,
			lines: "=== purerdma-vm: run tool (amd64, Linux 6.12.57+deb12-amd64)\nno such file\npurerdma-vm: tool: exit status 3\n" +
				"=== purerdma-vm: tool exit 3 (amd64, Linux 6.12.57+deb12-amd64, 1ms)\npurerdma-vm: exit status 1",
			stdout:   "no such file\npurerdma-vm: tool: exit status 3\n",
			code:     3,
			complete: true,
		},
		{
			name:     "set-up failed",
			guests:   1,
			lines:    "purerdma-vm: setup failed: rdma link add siw0: no such device\npurerdma-vm: exit status 2\n",
			complete: false,
		},
		{
			name:   "pair: the worse guest",
			guests: 2,
			lines: "[a] === purerdma-vm: run p.test (amd64, Linux 6.1)\n[b] === purerdma-vm: run p.test (amd64, Linux 6.1)\n" +
				"[a] ok\n[b] bad\n[b] === purerdma-vm: p.test exit 1 (amd64, Linux 6.1, 1s)\n[a] === purerdma-vm: p.test exit 0 (amd64, Linux 6.1, 1s)\n",
			stdout:   "[a] ok\n[b] bad\n",
			code:     1,
			complete: true,
		},
		{
			name:     "pair: a guest died",
			guests:   2,
			lines:    "[a] === purerdma-vm: run p.test (amd64, Linux 6.1)\n[a] === purerdma-vm: p.test exit 0 (amd64, Linux 6.1, 1s)\n[b] Kernel panic\n",
			complete: false,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			c := newConsole(&stdout, &stderr, false)
			// Bytes arrive in pieces that split lines.
			for chunk := range slices3(tc.lines) {
				c.Write([]byte(chunk))
			}
			c.flush()
			if stdout.String() != tc.stdout {
				t.Errorf("stdout %q, want %q", stdout.String(), tc.stdout)
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr %q without -v, want nothing", stderr.String())
			}
			code, complete := c.exitCode(tc.guests)
			if complete != tc.complete || complete && code != tc.code {
				t.Errorf("exitCode = %d, %v; want %d, %v", code, complete, tc.code, tc.complete)
			}
			var setup bytes.Buffer
			c.dumpSetup(&setup)
			if got := setup.Len() + stdout.Len(); got != len(strings.TrimSuffix(tc.lines, "\n"))+1 {
				t.Errorf("%d bytes on stdout and kept, want every line of the %d once", got, len(tc.lines))
			}
		})
	}
}

// slices3 cuts s into pieces of 3 bytes.
func slices3(s string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for len(s) > 0 {
			n := min(3, len(s))
			if !yield(s[:n]) {
				return
			}
			s = s[n:]
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		cmd     []string
		wantErr bool
	}{
		{[]string{"/tmp/go-build1/b001/p.test", "-test.paniconexit0", "-test.v=true"}, []string{"/tmp/go-build1/b001/p.test", "-test.paniconexit0", "-test.v=true"}, false},
		{[]string{"-ctools", "-kernel", "6.12", "--", "rping", "-s"}, []string{"rping", "-s"}, false},
		{[]string{"-pair"}, nil, true},
		{[]string{"-vmlinuz", "/boot/vmlinuz", "p.test"}, nil, true},
		{[]string{"-nosuchflag", "p.test"}, nil, true},
	} {
		_, cmd, err := parse(tc.args, &bytes.Buffer{})
		if (err != nil) != tc.wantErr || strings.Join(cmd, " ") != strings.Join(tc.cmd, " ") {
			t.Errorf("parse(%q) = %q, %v; want %q, error %v", tc.args, cmd, err, tc.cmd, tc.wantErr)
		}
	}
}

func TestTestTimeout(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{[]string{"-test.paniconexit0", "-test.timeout=10m0s", "-test.v=true"}, 10 * time.Minute},
		{[]string{"-test.timeout", "90s"}, 90 * time.Second},
		{[]string{"-test.timeout=0s"}, 0},
		{[]string{"-test.v"}, 0},
		{[]string{"-test.timeout=soon"}, 0},
	} {
		if got := testTimeout(tc.args); got != tc.want {
			t.Errorf("testTimeout(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

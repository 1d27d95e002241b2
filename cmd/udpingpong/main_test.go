package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseArgs(t *testing.T) {
	def := defaultOptions()
	with := func(f func(o *options)) options {
		o := def
		f(&o)
		return o
	}
	tests := []struct {
		args []string
		want options
	}{
		{nil, def},
		{[]string{"-p", "1234", "-d", "rxe0", "-i", "2", "-s", "64", "-r", "10", "-n", "7", "-l", "3", "-e", "-g", "1", "host"},
			with(func(o *options) {
				o.port, o.ibDev, o.ibPort, o.size, o.rxDepth, o.iters, o.sl = 1234, "rxe0", 2, 64, 10, 7, 3
				o.events, o.gidIdx, o.server = true, 1, "host"
			})},
		{[]string{"-eg3", "-p0x10", "-n010"}, with(func(o *options) { o.events, o.gidIdx, o.port, o.iters = true, 3, 16, 8 })},
		{[]string{"--port=99", "--ib-dev", "siw0", "--events", "--gid-idx=2", "--sl=1", "--", "-host"},
			with(func(o *options) {
				o.port, o.ibDev, o.events, o.gidIdx, o.sl, o.server = 99, "siw0", true, 2, 1, "-host"
			})},
	}
	for _, tt := range tests {
		got, err := parseArgs(tt.args)
		if err != nil {
			t.Errorf("parseArgs(%q): %v", tt.args, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(options{})); diff != "" {
			t.Errorf("parseArgs(%q) (-want +got):\n%s", tt.args, diff)
		}
	}
	if def.size != 2048 {
		t.Errorf("default size %d, ibv_ud_pingpong's is 2048", def.size)
	}
}

// Bad command lines exit 1 with a message on stderr and the usage text on
// stdout; the RC tool's options that ibv_ud_pingpong lacks are unknown.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		args   []string
		stderr string
	}{
		{[]string{"-x"}, "invalid option -- 'x'"},
		{[]string{"-c"}, "invalid option -- 'c'"},
		{[]string{"-m", "1024"}, "invalid option -- 'm'"},
		{[]string{"--chk"}, "unrecognized option '--chk'"},
		{[]string{"-p"}, "option requires an argument -- 'p'"},
		{[]string{"--events=1"}, "doesn't allow an argument"},
		{[]string{"-p", "70000"}, `invalid argument "70000" for -p`},
		{[]string{"-i", "0"}, `invalid argument "0" for -i`},
		{[]string{"a", "b"}, ""},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if code := run(tt.args, &stdout, &stderr); code != 1 {
			t.Errorf("run(%q) = %d, want 1", tt.args, code)
		}
		if !strings.Contains(stderr.String(), tt.stderr) || (tt.stderr == "") != (stderr.Len() == 0) {
			t.Errorf("run(%q) stderr = %q, want it to say %q", tt.args, stderr.String(), tt.stderr)
		}
		if !strings.HasPrefix(stdout.String(), "Usage:\n") || !strings.Contains(stdout.String(), "(default 2048)") {
			t.Errorf("run(%q): no ibv_ud_pingpong usage on stdout: %q", tt.args, stdout.String())
		}
	}
}

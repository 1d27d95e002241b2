package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/uverbs"
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
		{[]string{"-p", "1234", "-d", "rxe0", "-i", "2", "-s", "64", "-m", "4096", "-r", "10", "-n", "7", "-l", "3", "-e", "-g", "1", "-c", "host"},
			with(func(o *options) {
				o.port, o.ibDev, o.ibPort, o.size, o.mtu, o.rxDepth, o.iters, o.sl = 1234, "rxe0", 2, 64, uverbs.MTU4096, 10, 7, 3
				o.events, o.gidIdx, o.validate, o.server = true, 1, true, "host"
			})},
		{[]string{"-ecg3", "-p0x10", "-n010"}, with(func(o *options) { o.events, o.validate, o.gidIdx, o.port, o.iters = true, true, 3, 16, 8 })},
		{[]string{"host", "-n", "5"}, with(func(o *options) { o.server, o.iters = "host", 5 })},
		{[]string{"--port=99", "--ib-dev", "siw0", "--events", "--gid-idx=2", "--chk", "--mtu=256", "--", "-host"},
			with(func(o *options) {
				o.port, o.ibDev, o.events, o.gidIdx, o.validate, o.mtu, o.server = 99, "siw0", true, 2, true, uverbs.MTU256, "-host"
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
}

// Bad command lines exit 1 with a message on stderr; the ones getopt
// rejects also print the usage text on stdout, as the C tool does.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		args   []string
		stderr string
		usage  bool
	}{
		{[]string{"-x"}, "invalid option -- 'x'", true},
		{[]string{"--bogus"}, "unrecognized option '--bogus'", true},
		{[]string{"-p"}, "option requires an argument -- 'p'", true},
		{[]string{"--port"}, "option '--port' requires an argument", true},
		{[]string{"--events=1"}, "doesn't allow an argument", true},
		{[]string{"-p", "70000"}, `invalid argument "70000" for -p`, true},
		{[]string{"-i", "0"}, `invalid argument "0" for -i`, true},
		{[]string{"-m", "1000"}, `invalid MTU "1000"`, true},
		{[]string{"-n", "abc"}, `invalid argument "abc" for -n`, true},
		{[]string{"a", "b"}, "", true},
		{[]string{"-o"}, "on-demand paging (-o) is not supported", false},
		{[]string{"-t", "host"}, "completion timestamps (-t) is not supported", false},
		{[]string{"-j"}, "device memory (-j) is not supported", false},
		{[]string{"-P"}, "MR prefetch (-P) is not supported", false},
		{[]string{"--new_send"}, "(-N) is not supported", false},
		{[]string{"-U"}, "(-U) is not supported", false},
		{[]string{"-O"}, "(-O) is not supported", false},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if code := run(tt.args, &stdout, &stderr); code != 1 {
			t.Errorf("run(%q) = %d, want 1", tt.args, code)
		}
		if !strings.Contains(stderr.String(), tt.stderr) || (tt.stderr == "") != (stderr.Len() == 0) {
			t.Errorf("run(%q) stderr = %q, want it to say %q", tt.args, stderr.String(), tt.stderr)
		}
		if got := strings.HasPrefix(stdout.String(), "Usage:\n"); got != tt.usage {
			t.Errorf("run(%q) printed usage: %v, want %v; stdout %q", tt.args, got, tt.usage, stdout.String())
		}
	}
}

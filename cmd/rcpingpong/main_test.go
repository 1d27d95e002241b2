package main

import (
	"testing"

	"github.com/purerdma/purerdma/cmd/internal/pingpong"
	"github.com/purerdma/purerdma/cmd/internal/pingpong/pptest"
	"github.com/purerdma/purerdma/uverbs"
)

// ibv_rc_pingpong's letters and defaults; the getopt rules themselves are
// tested in cmd/internal/pingpong.
func TestParseArgs(t *testing.T) {
	with := func(f func(o *pingpong.Options)) pingpong.Options { return pptest.With(tool, f) }
	tests := []struct {
		args []string
		want pingpong.Options
	}{
		{nil, pingpong.Options{Port: 18515, IBPort: 1, Size: 4096, MTU: uverbs.MTU1024, NumQP: 1, RxDepth: 500, Iters: 1000, GIDIdx: -1}},
		{[]string{"-p", "1234", "-d", "rxe0", "-i", "2", "-s", "64", "-m", "4096", "-r", "10", "-n", "7", "-l", "3", "-e", "-g", "1", "-c", "host"},
			with(func(o *pingpong.Options) {
				o.Port, o.IBDev, o.IBPort, o.Size, o.MTU, o.RxDepth, o.Iters, o.SL = 1234, "rxe0", 2, 64, uverbs.MTU4096, 10, 7, 3
				o.Events, o.GIDIdx, o.Validate, o.Server = true, 1, true, "host"
			})},
		{[]string{"-ecg3", "-p0x10", "-n010"}, with(func(o *pingpong.Options) { o.Events, o.Validate, o.GIDIdx, o.Port, o.Iters = true, true, 3, 16, 8 })},
		{[]string{"host", "-n", "5"}, with(func(o *pingpong.Options) { o.Server, o.Iters = "host", 5 })},
		{[]string{"--port=99", "--ib-dev", "siw0", "--events", "--gid-idx=2", "--chk", "--mtu=256", "--", "-host"},
			with(func(o *pingpong.Options) {
				o.Port, o.IBDev, o.Events, o.GIDIdx, o.Validate, o.MTU, o.Server = 99, "siw0", true, 2, true, uverbs.MTU256, "-host"
			})},
	}
	for _, tt := range tests {
		pptest.CheckParse(t, tool, tt.args, tt.want)
	}
}

// Bad command lines exit 1 with a message on stderr; the ones getopt
// rejects also print the usage text on stdout, as the C tool does. The
// options this port lacks are refused without it.
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
		pptest.CheckError(t, tool, runContext, tt.args, tt.stderr, tt.usage)
	}
}

package main

import (
	"testing"

	"github.com/purerdma/purerdma/cmd/internal/pingpong"
	"github.com/purerdma/purerdma/cmd/internal/pingpong/pptest"
)

// ibv_ud_pingpong's letters and defaults (2048 bytes); the getopt rules
// themselves are tested in cmd/internal/pingpong.
func TestParseArgs(t *testing.T) {
	with := func(f func(o *pingpong.Options)) pingpong.Options { return pptest.With(tool, f) }
	tests := []struct {
		args []string
		want pingpong.Options
	}{
		{nil, pingpong.Options{Port: 18515, IBPort: 1, Size: 2048, NumQP: 1, RxDepth: 500, Iters: 1000, GIDIdx: -1}},
		{[]string{"-p", "1234", "-d", "rxe0", "-i", "2", "-s", "64", "-r", "10", "-n", "7", "-l", "3", "-e", "-g", "1", "host"},
			with(func(o *pingpong.Options) {
				o.Port, o.IBDev, o.IBPort, o.Size, o.RxDepth, o.Iters, o.SL = 1234, "rxe0", 2, 64, 10, 7, 3
				o.Events, o.GIDIdx, o.Server = true, 1, "host"
			})},
		{[]string{"-eg3", "-p0x10", "-n010"}, with(func(o *pingpong.Options) { o.Events, o.GIDIdx, o.Port, o.Iters = true, 3, 16, 8 })},
		{[]string{"--port=99", "--ib-dev", "siw0", "--events", "--gid-idx=2", "--sl=1", "--", "-host"},
			with(func(o *pingpong.Options) {
				o.Port, o.IBDev, o.Events, o.GIDIdx, o.SL, o.Server = 99, "siw0", true, 2, 1, "-host"
			})},
	}
	for _, tt := range tests {
		pptest.CheckParse(t, tool, tt.args, tt.want)
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
		pptest.CheckError(t, tool, runContext, tt.args, tt.stderr, true)
	}
}

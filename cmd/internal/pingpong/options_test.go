package pingpong

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/uverbs"
)

// testTool has every common letter and one of its own, 'x', which the
// tool's Set refuses.
var testTool = &Tool{
	Name: "pp",
	Opts: []Opt{
		Arg('p', "port"), Arg('d', "ib-dev"), Arg('i', "ib-port"), Arg('s', "size"),
		Arg('m', "mtu"), Arg('r', "rx-depth"), Arg('n', "iters"), Arg('l', "sl"),
		Flag('e', "events"), Arg('g', "gid-idx"), Flag('c', "chk"), Flag('x', "extra"),
	},
	Defaults: Options{Port: 18515, IBPort: 1, Size: 4096, MTU: uverbs.MTU1024, NumQP: 1, RxDepth: 500, Iters: 1000, GIDIdx: -1},
	Usage:    "usage of %[1]s\n",
	Set:      func(*Options, byte, string) error { return errors.New("-x is not supported") },
}

// The getopt_long rules the three tools share.
func TestParse(t *testing.T) {
	with := func(f func(o *Options)) Options {
		o := testTool.Defaults
		f(&o)
		return o
	}
	tests := []struct {
		args []string
		want Options
	}{
		{nil, testTool.Defaults},
		{[]string{"-p", "1234", "-d", "rxe0", "-i", "2", "-s", "64", "-m", "4096", "-r", "10", "-n", "7", "-l", "3", "-e", "-g", "1", "-c", "host"},
			with(func(o *Options) {
				o.Port, o.IBDev, o.IBPort, o.Size, o.MTU, o.RxDepth, o.Iters, o.SL = 1234, "rxe0", 2, 64, uverbs.MTU4096, 10, 7, 3
				o.Events, o.GIDIdx, o.Validate, o.Server = true, 1, true, "host"
			})},
		// Grouped flags, an attached argument ending the group; strtol's
		// base 0: hex and octal.
		{[]string{"-ecg3", "-p0x10", "-n010"}, with(func(o *Options) { o.Events, o.Validate, o.GIDIdx, o.Port, o.Iters = true, true, 3, 16, 8 })},
		// Options after the positional argument.
		{[]string{"host", "-n", "5"}, with(func(o *Options) { o.Server, o.Iters = "host", 5 })},
		// Long options with = or the next word; -- ends the options.
		{[]string{"--port=99", "--ib-dev", "siw0", "--events", "--gid-idx=2", "--chk", "--mtu=256", "--", "-host"},
			with(func(o *Options) {
				o.Port, o.IBDev, o.Events, o.GIDIdx, o.Validate, o.MTU, o.Server = 99, "siw0", true, 2, true, uverbs.MTU256, "-host"
			})},
		{[]string{"-", "-g-1"}, with(func(o *Options) { o.Server, o.GIDIdx = "-", -1 })},
		{[]string{"-m512", "-m", "2048", "-l15", "-p", "0"}, with(func(o *Options) { o.MTU, o.SL, o.Port = uverbs.MTU2048, 15, 0 })},
	}
	for _, tt := range tests {
		got, err := testTool.Parse(tt.args)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.args, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.args, diff)
		}
	}
}

// Tool.Main prints getopt's complaint and the usage text for a usage error,
// the error alone otherwise, and exits 1; the body's error goes to stderr
// bare.
func TestToolMain(t *testing.T) {
	body := func(_ context.Context, o *Options, stdout io.Writer) error {
		if o.Server == "fail" {
			return errors.New("Couldn't connect")
		}
		fmt.Fprintf(stdout, "ran %d\n", o.Iters)
		return nil
	}
	tests := []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"-n", "3"}, 0, "ran 3\n", ""},
		{[]string{"fail"}, 1, "", "Couldn't connect\n"},
		{[]string{"-z"}, 1, "usage of pp\n", "pp: invalid option -- 'z'\n"},
		{[]string{"--zz"}, 1, "usage of pp\n", "pp: unrecognized option '--zz'\n"},
		{[]string{"-p"}, 1, "usage of pp\n", "pp: option requires an argument -- 'p'\n"},
		{[]string{"--port"}, 1, "usage of pp\n", "pp: option '--port' requires an argument\n"},
		{[]string{"--events=1"}, 1, "usage of pp\n", "pp: option '--events' doesn't allow an argument\n"},
		{[]string{"-p", "65536"}, 1, "usage of pp\n", "pp: invalid argument \"65536\" for -p\n"},
		{[]string{"-i0"}, 1, "usage of pp\n", "pp: invalid argument \"0\" for -i\n"},
		{[]string{"-s", "0"}, 1, "usage of pp\n", "pp: invalid argument \"0\" for -s\n"},
		{[]string{"-l", "16"}, 1, "usage of pp\n", "pp: invalid argument \"16\" for -l\n"},
		{[]string{"-n", "1x"}, 1, "usage of pp\n", "pp: invalid argument \"1x\" for -n\n"},
		{[]string{"-m", "1000"}, 1, "usage of pp\n", "pp: invalid MTU \"1000\": 256, 512, 1024, 2048 or 4096\n"},
		{[]string{"a", "b"}, 1, "usage of pp\n", ""},
		{[]string{"-x"}, 1, "", "pp: -x is not supported\n"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := testTool.Main(context.Background(), tt.args, &stdout, &stderr, body)
		if code != tt.code || stdout.String() != tt.stdout || stderr.String() != tt.stderr {
			t.Errorf("Main(%q) = %d, stdout %q, stderr %q; want %d, %q, %q",
				tt.args, code, stdout.String(), stderr.String(), tt.code, tt.stdout, tt.stderr)
		}
	}
}

// Closer runs every step whose object exists and keeps the first failure.
func TestCloser(t *testing.T) {
	fail := func(msg string) func() error { return func() error { return errors.New(msg) } }
	ok := func() error { return nil }
	tests := []struct {
		name  string
		steps func(c *Closer, ran *int)
		want  string
		ran   int
	}{
		{"none", func(c *Closer, ran *int) {}, "", 0},
		{"all fine", func(c *Closer, ran *int) {
			c.Step(true, func() error { *ran++; return ok() }, "a")
			c.Step(true, func() error { *ran++; return ok() }, "b")
		}, "", 2},
		{"absent skipped", func(c *Closer, ran *int) {
			c.Step(false, func() error { *ran++; return fail("x")() }, "a")
		}, "", 0},
		{"first kept", func(c *Closer, ran *int) {
			c.Step(true, func() error { *ran++; return fail("EBUSY")() }, "Couldn't destroy QP")
			c.Step(true, func() error { *ran++; return fail("EINVAL")() }, "Couldn't destroy CQ")
		}, "Couldn't destroy QP (EBUSY)", 2},
	}
	for _, tt := range tests {
		var c Closer
		ran := 0
		tt.steps(&c, &ran)
		got := ""
		if c.Err() != nil {
			got = c.Err().Error()
		}
		if got != tt.want || ran != tt.ran {
			t.Errorf("%s: Err %q after %d steps, want %q after %d", tt.name, got, ran, tt.want, tt.ran)
		}
	}
}

func TestMTUToEnum(t *testing.T) {
	tests := []struct {
		n    int
		want uverbs.MTU
	}{
		{256, uverbs.MTU256}, {512, uverbs.MTU512}, {1024, uverbs.MTU1024},
		{2048, uverbs.MTU2048}, {4096, uverbs.MTU4096}, {0, 0}, {1000, 0}, {8192, 0},
	}
	for _, tt := range tests {
		if got := MTUToEnum(tt.n); got != tt.want {
			t.Errorf("MTUToEnum(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
}

// PrintStats prints C's "%.2f" of whole microseconds held in a float.
func TestPrintStats(t *testing.T) {
	tests := []struct {
		usec        int64
		size, iters int
		want        string
	}{
		{1500000, 4096, 1000, "8192000 bytes in 1.50 seconds = 43.69 Mbit/sec\n1000 iters in 1.50 seconds = 1500.00 usec/iter\n"},
		{20000, 1, 1, "2 bytes in 0.02 seconds = 0.00 Mbit/sec\n1 iters in 0.02 seconds = 20000.00 usec/iter\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		PrintStats(&b, time.Duration(tt.usec)*time.Microsecond, tt.size, tt.iters)
		if b.String() != tt.want {
			t.Errorf("PrintStats(%dµs, %d, %d) = %q, want %q", tt.usec, tt.size, tt.iters, b.String(), tt.want)
		}
	}
}

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/pingpong"
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
		{[]string{"-p", "1234", "-d", "rxe0", "-i", "2", "-s", "64", "-m", "4096", "-q", "4", "-r", "10", "-n", "7", "-l", "3", "-e", "-g", "1", "host"},
			with(func(o *options) {
				o.port, o.ibDev, o.ibPort, o.size, o.mtu, o.numQP, o.rxDepth, o.iters, o.sl = 1234, "rxe0", 2, 64, uverbs.MTU4096, 4, 10, 7, 3
				o.events, o.gidIdx, o.server = true, 1, "host"
			})},
		{[]string{"--num-qp=256", "-eg3"}, with(func(o *options) { o.numQP, o.events, o.gidIdx = 256, true, 3 })},
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
	if def.numQP != 16 || def.size != 4096 || def.rxDepth != 500 {
		t.Errorf("defaults %+v differ from ibv_srq_pingpong's (16 QPs, 4096 bytes, 500 receives)", def)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		args   []string
		stderr string
		usage  bool
	}{
		{[]string{"-c"}, "invalid option -- 'c'", true},
		{[]string{"-q", "0"}, `invalid argument "0" for -q`, true},
		{[]string{"-q", "257"}, `invalid argument "257" for -q`, true},
		{[]string{"-m", "1000"}, `invalid MTU "1000"`, true},
		{[]string{"-q", "8", "-r", "4"}, "rx_depth 4 is too small for 8 QPs -- must have at least one receive per QP.", false},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if code := run(tt.args, &stdout, &stderr); code != 1 {
			t.Errorf("run(%q) = %d, want 1", tt.args, code)
		}
		if !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("run(%q) stderr = %q, want it to say %q", tt.args, stderr.String(), tt.stderr)
		}
		if got := strings.HasPrefix(stdout.String(), "Usage:\n"); got != tt.usage {
			t.Errorf("run(%q) printed usage: %v, want %v; stdout %q", tt.args, got, tt.usage, stdout.String())
		}
	}
}

// TestExchangeMessages checks the exchange is always maxQP messages, the
// ones past -q zero.
func TestExchangeMessages(t *testing.T) {
	my := []pingpong.Dest{{LID: 1, QPN: 0x11, PSN: 0x22}, {LID: 1, QPN: 0x12, PSN: 0x23, GID: uverbs.GID{15: 9}}}
	b := encodeAll(my)
	if len(b) != maxQP*pingpong.MsgSize {
		t.Fatalf("%d bytes, want %d", len(b), maxQP*pingpong.MsgSize)
	}
	if got := string(b[2*pingpong.MsgSize : 3*pingpong.MsgSize-1]); got != "0000:000000:000000:00000000000000000000000000000000" {
		t.Errorf("third message %q, want a zero address", got)
	}
	rem, err := readAll(bytes.NewReader(b), 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(my, rem, cmp.AllowUnexported(pingpong.Dest{})); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, err := readAll(bytes.NewReader(b[:len(b)-1]), 2); err == nil {
		t.Error("readAll of a short exchange succeeded")
	}
}

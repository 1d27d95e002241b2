package main

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/cmd/internal/pingpong"
	"github.com/purerdma/purerdma/cmd/internal/pingpong/pptest"
	"github.com/purerdma/purerdma/uverbs"
)

// ibv_srq_pingpong's letters and defaults (16 QPs, 4096 bytes, 500
// receives); the getopt rules themselves are tested in cmd/internal/pingpong.
func TestParseArgs(t *testing.T) {
	with := func(f func(o *pingpong.Options)) pingpong.Options { return pptest.With(tool, f) }
	tests := []struct {
		args []string
		want pingpong.Options
	}{
		{nil, pingpong.Options{Port: 18515, IBPort: 1, Size: 4096, MTU: uverbs.MTU1024, NumQP: 16, RxDepth: 500, Iters: 1000, GIDIdx: -1}},
		{[]string{"-p", "1234", "-d", "rxe0", "-i", "2", "-s", "64", "-m", "4096", "-q", "4", "-r", "10", "-n", "7", "-l", "3", "-e", "-g", "1", "host"},
			with(func(o *pingpong.Options) {
				o.Port, o.IBDev, o.IBPort, o.Size, o.MTU, o.NumQP, o.RxDepth, o.Iters, o.SL = 1234, "rxe0", 2, 64, uverbs.MTU4096, 4, 10, 7, 3
				o.Events, o.GIDIdx, o.Server = true, 1, "host"
			})},
		{[]string{"--num-qp=256", "-eg3"}, with(func(o *pingpong.Options) { o.NumQP, o.Events, o.GIDIdx = 256, true, 3 })},
	}
	for _, tt := range tests {
		pptest.CheckParse(t, tool, tt.args, tt.want)
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
		pptest.CheckError(t, tool, runContext, tt.args, tt.stderr, tt.usage)
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
	if diff := cmp.Diff(my, rem); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, err := readAll(bytes.NewReader(b[:len(b)-1]), 2); err == nil {
		t.Error("readAll of a short exchange succeeded")
	}
}

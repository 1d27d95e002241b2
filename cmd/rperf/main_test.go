package main

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/perftest"
)

func TestParseArgs(t *testing.T) {
	o, err := parseArgs([]string{"write_lat", "-d", "rxe0", "-i", "2", "-x", "3", "-s", "64", "-n", "7", "-p", "1234", "-F", "-t", "64", "-I", "0", "--json", "host"})
	if err != nil {
		t.Fatal(err)
	}
	want := options{test: 0, dev: "rxe0", ibPort: 2, gidIdx: 3, size: 64, iters: 7, port: 1234, txDepth: 64, inline: 0, json: true, server: "host"}
	if o != want {
		t.Errorf("got %+v, want %+v", o, want)
	}
	o, err = parseArgs([]string{"send_bw", "-s4096", "--iters=10", "-a"})
	if err != nil {
		t.Fatal(err)
	}
	if o.size != 4096 || o.iters != 10 || !o.all || o.server != "" || perftest.Tests[o.test].Name != "send_bw" {
		t.Errorf("got %+v", o)
	}
	if s := o.sizes(); len(s) != 23 || s[0] != 2 || s[22] != 1<<23 {
		t.Errorf("-a sizes %v", s)
	}
	// Defaults as perftest's.
	for _, tt := range []struct {
		test        string
		size, iters int
	}{{"read_lat", 2, 1000}, {"write_bw", 65536, 5000}, {"atomic_lat", 8, 1000}} {
		o, err := parseArgs([]string{tt.test})
		if err != nil || o.size != tt.size || o.iters != tt.iters || o.port != 18515 || o.txDepth != 128 || o.gidIdx != -1 {
			t.Errorf("%s defaults: %+v, %v", tt.test, o, err)
		}
	}
	if o, _ := parseArgs([]string{"atomic_lat", "-s", "64", "-a"}); len(o.sizes()) != 1 || o.sizes()[0] != 8 {
		t.Errorf("atomic_lat sizes %v, want [8]", o.sizes())
	}
}

func TestParseArgsErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{nil, "no test"},
		{[]string{"bogus_lat"}, "unknown test"},
		{[]string{"write_lat", "-z"}, "unknown option"},
		{[]string{"write_lat", "-s"}, "needs an argument"},
		{[]string{"write_lat", "-s", "0"}, "invalid argument"},
		{[]string{"write_lat", "-n", "x"}, "invalid argument"},
		{[]string{"write_lat", "a", "b"}, "more than one server"},
		{[]string{"write_lat", "-D", "5"}, "duration mode"},
		{[]string{"write_lat", "-R"}, "rdma_cm"},
		{[]string{"write_lat", "-n", "3"}, "at least 5"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tt.args, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), tt.msg) {
			t.Errorf("run(%q) = %d, stderr %q; want 1 and %q", tt.args, code, stderr.String(), tt.msg)
		}
	}
}

func TestExchangeMessage(t *testing.T) {
	d := dest{test: 3, all: true, lid: 0x1234, qpn: 0xabcdef, psn: 0x123456, rkey: 0xdeadbeef, addr: 0x7f0011223344,
		size: 4096, iters: 1000, gid: [16]byte{10: 0xff, 11: 0xff, 12: 10, 15: 1}}
	b := d.encode()
	if len(b) != msgSize {
		t.Fatalf("%d bytes, want %d", len(b), msgSize)
	}
	got, err := decodeDest(b)
	if err != nil || got != d {
		t.Errorf("decode = %+v, %v; want %+v", got, err, d)
	}
	if _, err := decodeDest(append([]byte("XXXX"), b[4:]...)); err == nil {
		t.Error("bad magic accepted")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

func TestLatStats(t *testing.T) {
	// Posts 2 usec apart but for a few: 12 intervals in all, with a
	// round trip factor of 2 they are 1 usec each.
	tpost := []int64{0}
	gaps := []int64{2000, 2000, 2000, 2000, 4000, 2000, 2000, 2000, 2000, 2000, 100000, 6000}
	for _, g := range gaps {
		tpost = append(tpost, tpost[len(tpost)-1]+g)
	}
	r := perftest.Result{Iters: len(tpost)}
	latStats(&r, tpost, make([]int64, len(tpost)), 2)
	// Sorted: 9 x 2000, 4000, 6000, 100000; the 2 largest dropped: n = 10.
	// delta[n] = 6000 is perftest's t_max; the 99% and 99.9% indexes are
	// ceil(9.9) = ceil(9.99) = 10.
	if !near(r.TMin, 1) || !near(r.TMax, 3) || !near(r.TTypical, 1) || !near(r.TAvg, 1.1) ||
		!near(r.TStdev, 0.3) || !near(r.P99, 3) || !near(r.P999, 3) {
		t.Errorf("got %+v", r)
	}
	// An even count of samples: the median is the mean of the middle two.
	if m := median(4, []int64{1, 2, 4, 8}); m != 3 {
		t.Errorf("median of 4 = %d, want 3", m)
	}
	if m := median(5, []int64{1, 2, 4, 8, 9}); m != 4 {
		t.Errorf("median of 5 = %d, want 4", m)
	}
	// Read and atomic latency is a whole round trip.
	r = perftest.Result{Iters: len(tpost)}
	latStats(&r, tpost, make([]int64, len(tpost)), 1)
	if !near(r.TTypical, 2) {
		t.Errorf("rtt 1: typical %v, want 2", r.TTypical)
	}
}

func TestBWStats(t *testing.T) {
	// 10 sends of 1 MiB, posted 1 ms apart, cqMod 4: signaled 3, 7 and
	// the last, 9; the run takes 10 ms.
	const n, mod = 10, 4
	tpost := make([]int64, n)
	tcomp := make([]int64, n)
	for i := range n {
		tpost[i] = int64(i) * 1e6
	}
	tcomp[3] = 4e6
	tcomp[7] = 7.5e6
	tcomp[9] = 10e6
	r := perftest.Result{Bytes: perftest.MiB, Iters: n}
	bwStats(&r, tpost, tcomp, mod, false)
	if !near(r.BWAvg, 1000) || !near(r.MsgRate, 0.001) {
		t.Errorf("avg %v MB/s %v Mpps, want 1000 and 0.001", r.BWAvg, r.MsgRate)
	}
	// The best time per operation: from post 4 to completion 7, 0.5 ms.
	// (From post 6 or 7 to completion 7 the times are not real.)
	tcomp[7] = 8e6
	if got := peakDelta(tpost, tcomp, mod); got != 1e6 {
		t.Errorf("peakDelta = %v, want 1e6", got)
	}
	// Completion 7 at 7.5 ms: from post 7, 0.5 ms for one operation,
	// 2 GB/s at the peak.
	tcomp[7] = 7.5e6
	r = perftest.Result{Bytes: perftest.MiB, Iters: n}
	bwStats(&r, tpost, tcomp, mod, false)
	if !near(r.BWPeak, 2000) {
		t.Errorf("peak %v, want 2000", r.BWPeak)
	}
	r = perftest.Result{Bytes: perftest.MiB, Iters: n}
	bwStats(&r, tpost, tcomp, mod, true)
	if r.BWPeak != 0 || !near(r.BWAvg, 1000) {
		t.Errorf("receiver peak %v avg %v, want 0 and 1000", r.BWPeak, r.BWAvg)
	}
}

package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseRPMAResult(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      rpmaResult
		err       string
	}{
		{name: "C", out: "RESULT test=read bytes=64 iters=500 median_us=112.345\n",
			want: rpmaResult{"read", 64, 500, 112.345}},
		{name: "noise and extra field", out: "listening\nsomething\nRESULT test=sendrecv bytes=4096 iters=10 median_us=5e1 cpu=3\nmore\n",
			want: rpmaResult{"sendrecv", 4096, 10, 50}},
		{name: "fields in any order", out: "  RESULT median_us=1 iters=2 bytes=3 test=write_flush",
			want: rpmaResult{"write_flush", 3, 2, 1}},
		{name: "first line counts", out: "RESULT test=read bytes=1 iters=1 median_us=1\nRESULT test=read bytes=2 iters=2 median_us=2\n",
			want: rpmaResult{"read", 1, 1, 1}},
		{name: "none", out: "listening\nRESULTS test=read\n", err: "no RESULT line"},
		{name: "empty", out: "", err: "no RESULT line"},
		{name: "missing median", out: "RESULT test=read bytes=64 iters=500\n", err: "without median_us"},
		{name: "missing test", out: "RESULT bytes=64 iters=500 median_us=3\n", err: "without test"},
		{name: "bad bytes", out: "RESULT test=read bytes=x iters=500 median_us=3\n", err: "field bytes"},
		{name: "bad median", out: "RESULT test=read bytes=64 iters=500 median_us=fast\n", err: "field median_us"},
		{name: "no =", out: "RESULT test=read bytes 64\n", err: "without ="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseRPMAResult(tc.out)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestRPMAResultRoundTrip(t *testing.T) {
	r := rpmaResult{"write_flush", 4096, 300, 123.4567}
	s := r.String()
	if s != "RESULT test=write_flush bytes=4096 iters=300 median_us=123.457" {
		t.Fatalf("String: %q", s)
	}
	got, err := parseRPMAResult(s + "\n")
	if err != nil || got.Test != r.Test || got.Bytes != r.Bytes || got.Iters != r.Iters || math.Abs(got.MedianUS-r.MedianUS) > 1e-3 {
		t.Fatalf("parsed %+v, %v", got, err)
	}
}

func TestValidRPMA(t *testing.T) {
	ok := rpmaResult{"read", 64, 10, 3}
	if err := validRPMA(ok, "read", 64, 10); err != nil {
		t.Error(err)
	}
	for _, r := range []rpmaResult{
		{"read", 64, 10, 0}, {"read", 64, 10, -1}, {"read", 64, 10, math.NaN()}, {"read", 64, 10, math.Inf(1)},
		{"sendrecv", 64, 10, 3}, {"read", 4096, 10, 3}, {"read", 64, 11, 3},
	} {
		if validRPMA(r, "read", 64, 10) == nil {
			t.Errorf("%+v accepted", r)
		}
	}
}

func TestParseRPMAArgs(t *testing.T) {
	a, err := parseRPMAArgs([]string{"server", "192.168.77.1", "7204", "4096"})
	if err != nil || !a.server || a.addr.String() != "192.168.77.1" || a.port != 7204 || a.size != 4096 {
		t.Errorf("server: %+v, %v", a, err)
	}
	a, err = parseRPMAArgs([]string{"client", "192.168.77.1", "7204", "rpma_write_flush", "64", "100"})
	if err != nil || a.server || a.test != "write_flush" || a.size != 64 || a.iters != 100 || a.emulatedFlush {
		t.Errorf("client: %+v, %v", a, err)
	}
	a, err = parseRPMAArgs([]string{"-emulated-flush", "client", "192.168.77.1", "7204", "write_flush", "64", "100"})
	if err != nil || !a.emulatedFlush || a.test != "write_flush" {
		t.Errorf("client -emulated-flush: %+v, %v", a, err)
	}
	for _, args := range [][]string{
		nil,
		{"server", "192.168.77.1", "7204"},
		{"server", "nowhere", "7204", "64"},
		{"server", "192.168.77.1", "70000", "64"},
		{"server", "192.168.77.1", "7204", "0"},
		{"client", "192.168.77.1", "7204", "write", "64", "100"},
		{"client", "192.168.77.1", "7204", "read", "64", "0"},
		{"client", "192.168.77.1", "7204", "read", "x", "10"},
		{"both", "192.168.77.1", "7204", "64"},
		{"-emulated-flush"},
		{"server", "-emulated-flush", "192.168.77.1", "7204", "64"},
	} {
		if _, err := parseRPMAArgs(args); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

func TestRPMAUsage(t *testing.T) {
	var o, e bytes.Buffer
	if code := run(t.Context(), []string{"rpma", "client"}, &o, &e); code != 2 || !strings.Contains(e.String(), "rperf rpma [-emulated-flush] server") {
		t.Errorf("exit %d, stderr %q", code, e.String())
	}
}

func TestRPMACompareFlags(t *testing.T) {
	var e bytes.Buffer
	c, err := parseCompareArgs(nil, &e)
	if err != nil || !c.rpma || c.rpmaPeer != defRPMAPeer || c.rpmaIters() != defRPMAIters {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	c, err = parseCompareArgs([]string{"-rpma=false", "-rpma-peer", "/x/rpmabench", "-n", "20"}, &e)
	if err != nil || c.rpma || c.rpmaPeer != "/x/rpmabench" || c.rpmaIters() != 20 {
		t.Fatalf("flags: %+v, %v", c, err)
	}
}

// A missing C peer skips the rpma rows with a note below the table.
func TestCompareRPMAMissingPeer(t *testing.T) {
	c := &compareOpts{rpma: true, rpmaPeer: t.TempDir() + "/rpmabench", rounds: 1}
	var o bytes.Buffer
	rows, counts, notes := c.compareRPMA(t.Context(), &o, time.Now())
	if len(rows) != 0 || len(counts) != 0 || len(notes) != 1 || !strings.Contains(notes[0], "skipped") {
		t.Fatalf("rows %+v, notes %q", rows, notes)
	}
	table := formatTables([]row{{test: "write_lat", bytes: 2, metric: latMetric, goV: []float64{1}, cV: []float64{2}, rounds: 1}}, nil, notes)
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	if n := len(lines); n != 7 || lines[n-1] != benchEnd || lines[n-3] != "" || !strings.HasPrefix(lines[n-2], "Note: rpma rows") {
		t.Fatalf("table:\n%s", table)
	}
	if formatTable(nil) != formatTables(nil, nil, nil) {
		t.Error("formatTable differs without notes")
	}
	c.rpma = false
	if rows, _, notes := c.compareRPMA(t.Context(), &o, time.Now()); rows != nil || notes != nil {
		t.Errorf("-rpma=false: %v %v", rows, notes)
	}
}

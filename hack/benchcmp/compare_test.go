package main

import (
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/perftest"
)

var nan = math.NaN()

func TestRatio(t *testing.T) {
	for _, tc := range []struct {
		goV, cV, want float64
	}{
		{50, 40, 1.25},
		{40, 80, 0.5},
		{1, 0, nan},
		{nan, 2, nan},
		{2, nan, nan},
		{0, 2, 0},
	} {
		got := ratio(tc.goV, tc.cV)
		if got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("ratio(%v, %v) = %v, want %v", tc.goV, tc.cV, got, tc.want)
		}
	}
}

func TestFormatNum(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{nan, "n/a"},
		{math.Inf(1), "n/a"},
		{0, "0"},
		{1234.567, "1234.6"},
		{42.345, "42.34"},
		{1, "1.00"},
		{0.0123456, "0.0123"},
	} {
		if got := formatNum(tc.in); got != tc.want {
			t.Errorf("formatNum(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMetrics(t *testing.T) {
	lat := perftest.Result{Bytes: 2, TTypical: 41.5}
	if got := latMetric.get(lat); got != 41.5 {
		t.Errorf("latency metric %v, want 41.5", got)
	}
	for _, tc := range []struct {
		r          perftest.Result
		bw, rate   float64
		whyDerived string
	}{
		{perftest.Result{Bytes: 65536, BWAvg: 123.45, MsgRate: 0.001975}, 123.45, 0.001975, ""},
		{perftest.Result{Bytes: 2, BWAvg: 0.02, MsgRate: 0.011108}, 0.011108 * 1e6 * 2 / perftest.MiB, 0.011108, "small BW from the rate"},
		{perftest.Result{Bytes: 64, BWAvg: 0, MsgRate: 0}, 0, 0, "no rate"},
	} {
		if got := bwMetric.get(tc.r); math.Abs(got-tc.bw) > 1e-9 {
			t.Errorf("BW of %+v = %v, want %v (%s)", tc.r, got, tc.bw, tc.whyDerived)
		}
		if got := rateMetric.get(tc.r); got != tc.rate {
			t.Errorf("rate of %+v = %v, want %v", tc.r, got, tc.rate)
		}
	}
	if n := len(metricsOf(perftest.Tests[0])); n != 1 {
		t.Errorf("latency test: %d metrics, want 1", n)
	}
	if n := len(metricsOf(perftest.Tests[4])); n != 2 {
		t.Errorf("bandwidth test: %d metrics, want 2", n)
	}
}

func TestFormatTable(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows []row
		want []string // the lines between the header and BENCH-END
	}{
		{"empty", nil, nil},
		{
			"latency",
			[]row{{test: "write_lat", bytes: 2, metric: latMetric, rounds: 3,
				goV: []float64{50, 52, 48}, cV: []float64{40, 41, 39}}},
			[]string{"| write_lat | 2 | t_typical usec (lower is better) | 50.00 | 40.00 | 1.25 | 1.24–1.26 | 0.100 | 3 |"},
		},
		{
			"failed rounds and bandwidth",
			[]row{
				{test: "read_bw", bytes: 65536, metric: bwMetric, rounds: 3,
					goV: []float64{150, nan, 170}, cV: []float64{200, 200, 200}},
				{test: "read_bw", bytes: 65536, metric: rateMetric, rounds: 3,
					goV: []float64{0.0024, nan, 0.0028}, cV: []float64{0.0032, 0.0032, 0.0032}},
			},
			[]string{
				"| read_bw | 65536 | BW average MB/s (higher is better) | 160.0 | 200.0 | 0.80 | n/a | n/a | Go 2/3, C 3/3 |",
				"| read_bw | 65536 | MsgRate Mpps (higher is better) | 0.0026 | 0.0032 | 0.81 | n/a | n/a | Go 2/3, C 3/3 |",
			},
		},
		{
			"no C result",
			[]row{{test: "atomic_lat", bytes: 8, metric: latMetric, rounds: 2,
				goV: []float64{30, 32}, cV: []float64{nan, math.Inf(1)}}},
			[]string{"| atomic_lat | 8 | t_typical usec (lower is better) | 31.00 | n/a | n/a | n/a | n/a | Go 2/2, C 0/2 |"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Split(strings.TrimSuffix(formatTable(tc.rows), "\n"), "\n")
			want := append([]string{
				benchBegin,
				"| test | bytes | metric | Go (median) | C (median) | Go/C | Go/C by round (IQR) | p | rounds |",
				"|---|---:|---|---:|---:|---:|---:|---:|---:|",
			}, tc.want...)
			want = append(want, benchEnd)
			if !slices.Equal(got, want) {
				t.Errorf("table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestParseCompareArgs(t *testing.T) {
	c, err := parseCompareArgs(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.dev != "rxe0" || c.gidIdx != -1 || c.rounds != 9 || !slices.Equal(c.sizes, []int{2, 64, 4096, 65536}) || len(c.tests) != len(perftest.Tests) ||
		filepath.Base(c.rperf) != "rperf" {
		t.Errorf("defaults: %+v", c)
	}
	if n := c.itersFor(perftest.Tests[0], 64); n != defLatIters {
		t.Errorf("latency iterations %d", n)
	}
	if n := c.itersFor(perftest.Tests[0], 65536); n != defLatBigIters {
		t.Errorf("latency iterations %d", n)
	}
	if n := c.itersFor(perftest.Tests[4], 64); n != defBWIters {
		t.Errorf("bandwidth iterations %d", n)
	}
	if n := c.itersFor(perftest.Tests[4], 65536); n != defBWBigIters {
		t.Errorf("large bandwidth iterations %d", n)
	}
	c, err = parseCompareArgs([]string{"-d", "siw0", "-x", "3", "-rounds", "2", "-sizes", "8, 16", "-n", "77", "-tests", "send_bw,ib_read_lat",
		"-goenv", "GOMAXPROCS=1", "-goenv", "GODEBUG=x=1", "-rperf", "/x/rperf"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.dev != "siw0" || c.gidIdx != 3 || c.rounds != 2 || !slices.Equal(c.sizes, []int{8, 16}) ||
		!slices.Equal(c.tests, []int{6, 1}) || c.itersFor(perftest.Tests[0], 2) != 77 ||
		!slices.Equal(c.goEnv, envList{"GOMAXPROCS=1", "GODEBUG=x=1"}) || c.rperf != "/x/rperf" {
		t.Errorf("parsed: %+v", c)
	}
	for _, bad := range [][]string{
		{"-rounds", "0"}, {"-sizes", "2,x"}, {"-sizes", "0"}, {"-tests", "nope"}, {"extra"}, {"-bogus"},
		{"-goenv", "GOMAXPROCS"}, {"-goenv", "=1"}, {"-aa", "-cross"}, {"-cross", "-rpma=false"},
	} {
		if _, err := parseCompareArgs(bad, io.Discard); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestRoles(t *testing.T) {
	for _, tc := range []struct {
		name     string
		c        compareOpts
		side     string
		srv, cli string
	}{
		{"Go", compareOpts{}, stackGo, stackGo, stackGo},
		{"C", compareOpts{}, stackC, stackC, stackC},
		{"aa Go", compareOpts{aa: true}, stackGo, stackC, stackC},
		{"aa C", compareOpts{aa: true}, stackC, stackC, stackC},
		{"cross Go", compareOpts{cross: true}, stackGo, stackC, stackGo},
		{"cross C", compareOpts{cross: true}, stackC, stackGo, stackC},
	} {
		if srv, cli := tc.c.roles(tc.side); srv != tc.srv || cli != tc.cli {
			t.Errorf("%s: server %s, client %s; want %s, %s", tc.name, srv, cli, tc.srv, tc.cli)
		}
	}
}

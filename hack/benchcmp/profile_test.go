package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/perftest"
)

func TestCommOf(t *testing.T) {
	for in, want := range map[string]string{"/opt/purerdma/bin/rperf": "rperf", "/x/rperf.test": "rperf.test", "ib_atomic_lat": "ib_atomic_lat", "a_very_long_program_name": "a_very_long_pro"} {
		if got := commOf(in); got != want {
			t.Errorf("commOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestItersForLoop(t *testing.T) {
	lat, bw := perftest.Tests[0], perftest.Tests[6]
	for _, tc := range []struct {
		name string
		t    perftest.Test
		r    perftest.Result
		d    time.Duration
		want int
	}{
		{"latency", lat, perftest.Result{TTypical: 50}, 4 * time.Second, 40000},
		{"read latency: a whole round trip", perftest.Tests[1], perftest.Result{TTypical: 100}, 4 * time.Second, 40000},
		{"bandwidth", bw, perftest.Result{MsgRate: 0.01}, 4 * time.Second, 40000},
		{"at least the calibration", lat, perftest.Result{TTypical: 5000}, time.Second, calibrationIters},
		{"no figure", bw, perftest.Result{}, time.Second, calibrationIters},
		{"capped", lat, perftest.Result{TTypical: 1e-6}, time.Second, 1 << 22},
	} {
		if got := itersForLoop(tc.t, tc.r, tc.d); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestParseProfileArgs(t *testing.T) {
	p, err := parseProfileArgs(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.tests) != 4 || !slices.Equal(p.rpmaTests, []string{"read"}) || p.loop != 4*time.Second || p.window != "30%-70%" || p.allowEmpty {
		t.Errorf("defaults: %+v", p)
	}
	p, err = parseProfileArgs([]string{"-tests", "ib_write_lat, rpma_read,rpma_sendrecv", "-goenv", "GOMAXPROCS=1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.tests, []int{0}) || !slices.Equal(p.rpmaTests, []string{"read", "sendrecv"}) || len(p.goEnv) != 1 {
		t.Errorf("parsed: %+v", p)
	}
	ws := p.workloads()
	if len(ws) != 3 || ws[0].cComm != "ib_write_lat" || ws[2].t.Name != "rpma_sendrecv" || ws[2].cComm != "rpmabench" {
		t.Errorf("workloads: %+v", ws)
	}
	if got := iterTime(perftest.Tests[1], perftest.Result{TTypical: 30, TAvg: 400}); got != 30 {
		t.Errorf("read_lat iteration %v µs, want the median, 30, not the stalled mean", got)
	}
	if got := iterTime(perftest.Tests[1], perftest.Result{TAvg: 40}); got != 40 {
		t.Errorf("read_lat iteration %v µs without a median, want the mean, 40", got)
	}
	if got := iterTime(ws[2].t, perftest.Result{TTypical: 30}); got != 60 {
		t.Errorf("rpma_sendrecv iteration %v µs, want 60", got)
	}
	for _, bad := range [][]string{{"-tests", "rpma_nope"}, {"-loop", "0s"}, {"-n", "-1"}, {"extra"}} {
		if _, err := parseProfileArgs(bad, io.Discard); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestProfileFails(t *testing.T) {
	empty := fmt.Errorf("%w in the slice 30%%-70%%", errNoSamples)
	noTool := fmt.Errorf("%w of rperf in the slice 30%%-70%%", errNoSamples)
	other := errors.New("calibration run: exit status 1")
	for _, c := range []struct {
		name       string
		err        error
		allowEmpty bool
		want       bool
	}{
		{"a profile", nil, false, false},
		{"no samples, make profile", empty, false, true},
		{"no samples, -allow-empty", empty, true, false},
		{"none of the tool's, -allow-empty", noTool, true, false},
		{"a failed run, -allow-empty", other, true, true},
		{"a failed run", other, false, true},
	} {
		if got := fails(c.err, c.allowEmpty); got != c.want {
			t.Errorf("%s: fails(%v, %v) = %v, want %v", c.name, c.err, c.allowEmpty, got, c.want)
		}
	}
}

func TestWriteProfileInfo(t *testing.T) {
	var b strings.Builder
	writeProfileInfo(&b, "6.12.57+deb13-amd64\n")
	if got, want := b.String(), "PROFILE-INFO: kernel=6.12.57+deb13-amd64\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	b.Reset()
	writeProfileInfo(&b, "")
	if b.String() != "" {
		t.Errorf("no release: got %q, want nothing", b.String())
	}
}

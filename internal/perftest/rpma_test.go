package perftest

import (
	"math"
	"slices"
	"strings"
	"testing"
)

var nan = math.NaN()

func TestParseRPMAResult(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      RPMAResult
		err       string
	}{
		{name: "C", out: "RESULT test=read bytes=64 iters=500 median_us=112.345\n",
			want: RPMAResult{"read", 64, 500, 112.345}},
		{name: "noise and extra field", out: "listening\nsomething\nRESULT test=sendrecv bytes=4096 iters=10 median_us=5e1 cpu=3\nmore\n",
			want: RPMAResult{"sendrecv", 4096, 10, 50}},
		{name: "fields in any order", out: "  RESULT median_us=1 iters=2 bytes=3 test=write_flush",
			want: RPMAResult{"write_flush", 3, 2, 1}},
		{name: "first line counts", out: "RESULT test=read bytes=1 iters=1 median_us=1\nRESULT test=read bytes=2 iters=2 median_us=2\n",
			want: RPMAResult{"read", 1, 1, 1}},
		{name: "none", out: "listening\nRESULTS test=read\n", err: "no RESULT line"},
		{name: "empty", out: "", err: "no RESULT line"},
		{name: "missing median", out: "RESULT test=read bytes=64 iters=500\n", err: "without median_us"},
		{name: "missing test", out: "RESULT bytes=64 iters=500 median_us=3\n", err: "without test"},
		{name: "bad bytes", out: "RESULT test=read bytes=x iters=500 median_us=3\n", err: "field bytes"},
		{name: "bad median", out: "RESULT test=read bytes=64 iters=500 median_us=fast\n", err: "field median_us"},
		{name: "no =", out: "RESULT test=read bytes 64\n", err: "without ="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRPMAResult(tc.out)
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
	r := RPMAResult{"write_flush", 4096, 300, 123.4567}
	s := r.String()
	if s != "RESULT test=write_flush bytes=4096 iters=300 median_us=123.457" {
		t.Fatalf("String: %q", s)
	}
	got, err := ParseRPMAResult(s + "\n")
	if err != nil || got.Test != r.Test || got.Bytes != r.Bytes || got.Iters != r.Iters || math.Abs(got.MedianUS-r.MedianUS) > 1e-3 {
		t.Fatalf("parsed %+v, %v", got, err)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, nan},
		{[]float64{nan, math.Inf(1)}, nan},
		{[]float64{3}, 3},
		{[]float64{3, 1}, 2},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{9, nan, 1, 5, math.Inf(1)}, 5},
		{[]float64{40, 41, 3990, 39, 42}, 41},
	} {
		got := Median(tc.in)
		if got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	in := []float64{3, 1, 2}
	Median(in)
	if !slices.Equal(in, []float64{3, 1, 2}) {
		t.Errorf("Median changed its argument: %v", in)
	}
}

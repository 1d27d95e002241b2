package perftest

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The rpma benchmark: rperf rpma (the rpma package) and the C librpma
// program test/rpmabench/testdata/peer.c take the same arguments and
// print the same line, so that either client runs against either server
// and the harness reads both:
//
//	RESULT test=<test> bytes=<size> iters=<iters> median_us=<median>

// RPMATests are the rpma benchmark's tests, in the order of the
// harness's rows (rpma_<test>).
var RPMATests = []string{"read", "write_flush", "sendrecv"}

// RPMAWarmup is the number of untimed iterations a client runs before
// iters timed ones.
func RPMAWarmup(iters int) int { return max(iters/10, 5) }

// RPMAResult is a RESULT line.
type RPMAResult struct {
	Test     string
	Bytes    int
	Iters    int
	MedianUS float64
}

func (r RPMAResult) String() string {
	return fmt.Sprintf("RESULT test=%s bytes=%d iters=%d median_us=%.3f", r.Test, r.Bytes, r.Iters, r.MedianUS)
}

// ParseRPMAResult finds the RESULT line in out, Go's or C's. Fields it
// does not know are skipped, so that a peer may print more.
func ParseRPMAResult(out string) (RPMAResult, error) {
	var r RPMAResult
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "RESULT" {
			continue
		}
		seen := map[string]bool{}
		for _, kv := range f[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return r, fmt.Errorf("RESULT field %q without =", kv)
			}
			var err error
			switch k {
			case "test":
				r.Test = v
			case "bytes":
				r.Bytes, err = strconv.Atoi(v)
			case "iters":
				r.Iters, err = strconv.Atoi(v)
			case "median_us":
				r.MedianUS, err = strconv.ParseFloat(v, 64)
			default:
				continue
			}
			if err != nil {
				return r, fmt.Errorf("RESULT field %s: %v", k, err)
			}
			seen[k] = true
		}
		for _, k := range []string{"test", "bytes", "iters", "median_us"} {
			if !seen[k] {
				return r, fmt.Errorf("RESULT line without %s: %q", k, sc.Text())
			}
		}
		return r, nil
	}
	return r, errors.New("no RESULT line in the output")
}

// Median is the median of the finite values in v (the mean of the middle
// two for an even count), NaN if there are none; v is left as it is. It is
// the RESULT line's median_us and the harness's median over rounds, where
// a failed run counts as NaN.
func Median(v []float64) float64 {
	s := Finite(v)
	if len(s) == 0 {
		return math.NaN()
	}
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Finite is v's finite values, in order, in a new slice: a failed run is
// NaN (or infinite) in the harness's columns.
func Finite(v []float64) []float64 {
	var out []float64
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}

package main

import (
	"math"
	"slices"

	"github.com/purerdma/purerdma/internal/perftest"
)

// latMeasureTail is perftest's LAT_MEASURE_TAIL: the largest samples
// dropped before the statistics.
const latMeasureTail = 2

// median is perftest's get_median on the sorted delta[:n].
func median(n int, delta []int64) int64 {
	if (n-1)%2 != 0 {
		return (delta[n/2] + delta[n/2-1]) / 2
	}
	return delta[n/2]
}

// latStats is print_report_lat: the intervals between consecutive posts,
// sorted, without the latMeasureTail largest, divided by rtt (2 for the
// ping-pong tests: half a round trip). tpost holds ns; scratch is at least
// as long. The standard deviation is computed in floating point (perftest
// truncates each difference to an integer number of usec).
func latStats(r *perftest.Result, tpost, scratch []int64, rtt int) {
	iters := r.Iters
	n := iters - 1
	delta := scratch[:n]
	for i := range n {
		delta[i] = tpost[i+1] - tpost[i]
	}
	slices.Sort(delta)
	n -= latMeasureTail
	q := 1000 * float64(rtt) // ns to usec, per one-way trip
	us := func(v int64) float64 { return float64(v) / q }
	var sum float64
	for i := range n {
		sum += us(delta[i])
	}
	avg := sum / float64(n)
	var ss float64
	for i := range n {
		d := avg - us(delta[i])
		ss += d * d
	}
	i99 := int(math.Ceil(float64(n) * 0.99))
	i999 := int(math.Ceil(float64(n) * 0.999))
	r.TMin = us(delta[0])
	r.TMax = us(delta[n])
	r.TTypical = us(median(n, delta))
	r.TAvg = avg
	r.TStdev = math.Sqrt(ss / float64(n))
	r.P99 = us(delta[i99])
	r.P999 = us(delta[i999])
}

// peakDelta is the peak part of print_report_bw: the smallest time per
// operation over the runs from post i to the completion j of a signaled
// operation (j = cqMod-1 mod cqMod, or the last).
func peakDelta(tpost, tcomp []int64, cqMod int) float64 {
	iters := len(tpost)
	best := math.Inf(1)
	for i := range iters {
		j := (i+cqMod)/cqMod*cqMod - 1 // ROUND_UP(i+1, cqMod) - 1
		for ; j < iters; j += cqMod {
			if t := float64(tcomp[j]-tpost[i]) / float64(j-i+1); t < best {
				best = t
			}
		}
		if iters%cqMod != 0 {
			j := iters - 1
			if t := float64(tcomp[j]-tpost[i]) / float64(j-i+1); t < best {
				best = t
			}
		}
	}
	return best
}

// bwStats is print_report_bw for one QP, times in ns: the average over
// the whole run, the message rate, and the peak from peakDelta. The
// receiver of send_bw has no post times and, as perftest's, reports no
// peak (0).
func bwStats(r *perftest.Result, tpost, tcomp []int64, cqMod int, receiver bool) {
	iters, size := r.Iters, float64(r.Bytes)
	total := float64(tcomp[iters-1] - tpost[0])
	if total <= 0 {
		total = 1
	}
	r.BWAvg = size * float64(iters) * 1e9 / total / perftest.MiB
	r.MsgRate = float64(iters) * 1e3 / total
	if receiver {
		r.BWPeak = 0
		return
	}
	d := peakDelta(tpost[:iters], tcomp[:iters], cqMod)
	if d <= 0 || math.IsInf(d, 1) {
		r.BWPeak = r.BWAvg
		return
	}
	r.BWPeak = size * 1e9 / d / perftest.MiB
}

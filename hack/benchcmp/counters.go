package main

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// compare's counter table: what rxe counted during each run, per
// message. A ratio says which side is slower; these say whether the two
// sides put the same traffic on the wire: packets per message, RNR NAKs
// (a receiver without a posted receive) and retransmissions (each costs a
// timer's wait). The processes' CPU time is no help here: it covers their
// start-up, and perftest spends half a second of it measuring the CPU's
// clock.

// runCounts is the device's counters over one run.
type runCounts struct {
	iters    int
	counters map[string]uint64 // increase over the run
}

// counterDir is where the kernel shows port 1's hw_counters of dev.
func counterDir(dev string) string {
	return filepath.Join("/sys/class/infiniband", dev, "ports/1/hw_counters")
}

// readCounters reads every counter in dir; a device without them (siw)
// gives an empty map.
func readCounters(dir string) map[string]uint64 {
	m := map[string]uint64{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return m
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
			m[e.Name()] = v
		}
	}
	return m
}

// counterDelta is after-before for the counters both hold.
func counterDelta(before, after map[string]uint64) map[string]uint64 {
	d := map[string]uint64{}
	for k, a := range after {
		if b, ok := before[k]; ok && a >= b {
			d[k] = a - b
		}
	}
	return d
}

// counterMetric is one column of the counter table, per message or per 1000.
type counterMetric struct {
	name string
	get  func(runCounts) float64
}

// counter is the increase of rxe counter name per message times scale;
// NaN when the device has no such counter.
func counter(name string, scale float64) func(runCounts) float64 {
	return func(c runCounts) float64 {
		v, ok := c.counters[name]
		if !ok || c.iters == 0 {
			return math.NaN()
		}
		return float64(v) / float64(c.iters) * scale
	}
}

var counterMetrics = []counterMetric{
	{"rxe packets sent/msg", counter("sent_pkts", 1)},
	{"rxe RNR NAKs sent/1000 msgs", counter("send_rnr_err", 1000)},
	{"rxe retransmissions/1000 msgs", counter("completer_retry_err", 1000)},
	{"rxe duplicate requests/1000 msgs", counter("duplicate_request", 1000)},
}

// counterRows are the counter table's rows of one test and size, empty.
func counterRows(test string, size, rounds int) []row {
	rs := make([]row, len(counterMetrics))
	for i, m := range counterMetrics {
		rs[i] = row{test: test, bytes: size, metric: metric{name: m.name, lower: true}, rounds: rounds}
	}
	return rs
}

// addCounts appends one run's counts (NaN if it failed) to rs, counterRows'.
func addCounts(rs []row, side string, c runCounts, failed bool) {
	for i, m := range counterMetrics {
		v := math.NaN()
		if !failed {
			v = m.get(c)
		}
		rs[i].add(side, v)
	}
}

// measured runs pair with the device's counters read around it and fills
// counts.
func (c *compareOpts) measured(iters int, counts *runCounts, pair func() (childOut, error)) (childOut, error) {
	dir := counterDir(c.dev)
	before := readCounters(dir)
	out, err := pair()
	*counts = runCounts{iters: iters, counters: counterDelta(before, readCounters(dir))}
	return out, err
}

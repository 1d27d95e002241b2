package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCounters(t *testing.T) {
	dir := t.TempDir()
	for name, v := range map[string]string{"sent_pkts": "10\n", "send_rnr_err": "0\n", "junk": "x\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := readCounters(dir)
	if diff := cmp.Diff(map[string]uint64{"sent_pkts": 10, "send_rnr_err": 0}, before); diff != "" {
		t.Errorf("readCounters (-want +got):\n%s", diff)
	}
	if got := readCounters(filepath.Join(dir, "none")); len(got) != 0 {
		t.Errorf("no directory: %v", got)
	}
	after := map[string]uint64{"sent_pkts": 2010, "send_rnr_err": 3, "new": 5}
	d := counterDelta(before, after)
	if diff := cmp.Diff(map[string]uint64{"sent_pkts": 2000, "send_rnr_err": 3}, d); diff != "" {
		t.Errorf("counterDelta (-want +got):\n%s", diff)
	}
	c := runCounts{iters: 1000, counters: d}
	for _, tc := range []struct {
		metric string
		want   float64
	}{
		{"rxe packets sent/msg", 2},
		{"rxe RNR NAKs sent/1000 msgs", 3},
		{"rxe retransmissions/1000 msgs", math.NaN()}, // not in the counters
	} {
		var got float64 = -1
		for _, m := range counterMetrics {
			if m.name == tc.metric {
				got = m.get(c)
			}
		}
		if !(got == tc.want || math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("%s = %v, want %v", tc.metric, got, tc.want)
		}
	}
}

// Cost rows with no value on either side (a device without counters)
// are left out of the counter table; no counter rows, no counter table.
func TestFormatCounters(t *testing.T) {
	cs := counterRows("send_bw", 64, 1)
	addCounts(cs, stackGo, runCounts{iters: 10, counters: map[string]uint64{"sent_pkts": 20}}, false)
	addCounts(cs, stackC, runCounts{iters: 10, counters: map[string]uint64{"sent_pkts": 30}}, true)
	table := formatTables(nil, cs, nil)
	if !strings.Contains(table, counterHeading) || !strings.Contains(table, "| send_bw | 64 | rxe packets sent/msg | 2.00 | n/a | n/a | n/a | n/a | Go 1/1, C 0/1 |") {
		t.Errorf("table:\n%s", table)
	}
	if strings.Contains(table, "RNR") {
		t.Errorf("rows without values shown:\n%s", table)
	}
	if strings.Contains(formatTables(nil, nil, nil), counterHeading) {
		t.Error("counts heading without counter rows")
	}
}

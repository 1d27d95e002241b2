package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/perftest"
)

func TestValidRPMA(t *testing.T) {
	res := func(test string, bytes, iters int, median float64) perftest.RPMAResult {
		return perftest.RPMAResult{Test: test, Bytes: bytes, Iters: iters, MedianUS: median}
	}
	if err := validRPMA(res("read", 64, 10, 3), "read", 64, 10); err != nil {
		t.Error(err)
	}
	for _, r := range []perftest.RPMAResult{
		res("read", 64, 10, 0), res("read", 64, 10, -1), res("read", 64, 10, math.NaN()), res("read", 64, 10, math.Inf(1)),
		res("sendrecv", 64, 10, 3), res("read", 4096, 10, 3), res("read", 64, 11, 3),
	} {
		if validRPMA(r, "read", 64, 10) == nil {
			t.Errorf("%+v accepted", r)
		}
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

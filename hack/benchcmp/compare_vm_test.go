package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
)

// gidIndex returns the index of d's RoCE v2 IPv4 GID.
func gidIndex(t *testing.T, d testenv.Dev) int {
	t.Helper()
	gidx, err := gidOfAddr(d.Name, d.Addr)
	if err != nil {
		t.Fatal(err)
	}
	return gidx
}

// compare end to end, one short round of two tests: the results table
// and the counter table, whose rows come from rxe's counters (a hardware
// device's are its driver's, and its rows are not checked). The Go side
// is the rperf of the VM image, as in make bench, or make test-native's.
func TestCompareRXE(t *testing.T) {
	d := testenv.RoCE(t)
	gidx := gidIndex(t, d)
	rperf := testenv.ProjectTool(t, "rperf")
	tools := filepath.Dir(testenv.CTool(t, "ib_write_lat"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	args := []string{"-d", d.Name, "-x", strconv.Itoa(gidx), "-tests", "write_lat,send_bw", "-sizes", "64",
		"-rounds", "1", "-n", "200", "-ctools", tools, "-rpma=false", "-rperf", rperf}
	if rc := compare(ctx, args, &out, &errOut); rc != 0 {
		t.Fatalf("compare exited %d: %s\n%s", rc, errOut.String(), out.String())
	}
	t.Logf("%s", out.String())
	cells := tableCells(out.String())
	for _, tc := range []struct {
		test, metric string
		min          float64 // both sides' value must be at least this
	}{
		{"write_lat", latMetric.name, 0.1},
		{"send_bw", rateMetric.name, 1e-6},
		// A message is a packet at least.
		{"write_lat", "rxe packets sent/msg", 1},
		{"send_bw", "rxe packets sent/msg", 1},
	} {
		if strings.HasPrefix(tc.metric, "rxe ") && d.Driver != "rxe" {
			continue
		}
		row, ok := cells[tc.test+"/"+tc.metric]
		if !ok {
			t.Errorf("no row %s %q", tc.test, tc.metric)
			continue
		}
		for i, side := range []string{stackGo, stackC} {
			v, err := strconv.ParseFloat(row[i], 64)
			if err != nil || v < tc.min {
				t.Errorf("%s %q: %s side %q, want a number ≥ %v", tc.test, tc.metric, side, row[i], tc.min)
			}
		}
	}
}

// tableCells maps "test/metric" to the Go and C medians of compare's
// tables.
func tableCells(out string) map[string][2]string {
	m := map[string][2]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "|")
		// Nine columns (writeTable's): the edges make eleven fields.
		if len(f) != 11 || strings.TrimSpace(f[1]) == "test" || strings.HasPrefix(f[1], "-") {
			continue
		}
		m[strings.TrimSpace(f[1])+"/"+strings.TrimSpace(f[3])] = [2]string{strings.TrimSpace(f[4]), strings.TrimSpace(f[5])}
	}
	return m
}

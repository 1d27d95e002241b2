package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
)

// benchcmp profile end to end on a short write_lat: both sides run under
// perf record, perf report's answers are read, and the report comes out
// framed and complete. What perf samples of a one-second loop in a TCG
// guest is chance, so the test runs profile with -allow-empty and checks
// only what does not depend on it: each side's run and its report, a
// table with every row when the slice has samples, a note when it has
// none. The shares are logged; make profile (hack/vm profile), which
// leaves -allow-empty off, is what fails when a slice has no samples or
// none of the tool's processes.
func TestProfileRXE(t *testing.T) {
	d := testenv.Only(t, "rxe", "the profile's rows are rxe's kernel work (its tasks and functions under perf record -a)")
	gidx := gidIndex(t, d)
	rperf := testenv.ProjectTool(t, "rperf")
	perf := testenv.CTool(t, "perf")
	testenv.CTool(t, "ib_write_lat")
	// A guard against a hang, not a judgement of speed: the run takes
	// about 45 s in an idle TCG guest, and perf report alone took over
	// two minutes of a 6.12 guest on a 2-core host running two more
	// guests (2026-11-27).
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	args := []string{"-d", d.Name, "-x", strconv.Itoa(gidx), "-tests", "write_lat", "-loop", "1s", "-perf", perf, "-o", t.TempDir(), "-rperf", rperf, "-allow-empty"}
	if rc := profile(ctx, args, &out, &errOut); rc != 0 {
		t.Fatalf("profile exited %d: %s\n%s", rc, errOut.String(), out.String())
	}
	t.Logf("%s", out.String())
	o := out.String()
	begin, end := strings.Index(o, profileBegin+"\n"), strings.LastIndex(o, profileEnd+"\n")
	if begin < 0 || end < begin {
		t.Fatalf("no report between %s and %s", profileBegin, profileEnd)
	}
	if !strings.Contains(o[begin:end], "### write_lat, 64 bytes") {
		t.Errorf("no section for write_lat in the report")
	}
	empty := false
	for _, side := range []string{stackGo, stackC} {
		// Each side's line: nil, or the slice without samples that
		// -allow-empty lets pass.
		line := "profile: write_lat " + side + ": "
		switch {
		case strings.Contains(o, line+"<nil>\n"):
		case strings.Contains(o, line+errNoSamples.Error()):
			empty = true
			t.Logf("%s: perf sampled nothing of the loop in the slice (allowed here; make profile fails on it)", side)
		default:
			t.Errorf("no line %q<nil> or %q%s...", line, line, errNoSamples)
		}
	}
	if empty {
		return
	}
	// Every row, with a number for each side: how large is make
	// profile's to read.
	for _, row := range profileRowNames {
		if _, ok := profileCells(o, row); !ok {
			t.Errorf("no row %q with a share for each side", row)
		}
	}
}

// profileCells reads the Go and C shares of a row of profile's table.
func profileCells(out, row string) ([2]float64, bool) {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "|")
		if len(f) != 6 || strings.TrimSpace(f[1]) != row {
			continue
		}
		var v [2]float64
		for i := range v {
			x, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f[i+2]), "%")), 64)
			if err != nil {
				return v, false
			}
			v[i] = x
		}
		return v, true
	}
	return [2]float64{}, false
}

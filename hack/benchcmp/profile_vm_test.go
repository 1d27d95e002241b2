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

// benchcmp profile end to end on a short write_lat: perf records both sides,
// and the report finds each side's processes busy and rxe working (in
// their system calls on 6.1, in kworkers from 6.12).
func TestProfileRXE(t *testing.T) {
	d := testenv.Only(t, "rxe", "the profile's rows are rxe's kernel work (its tasks and functions under perf record -a)")
	gidx := gidIndex(t, d)
	rperf := testenv.ProjectTool(t, "rperf")
	perf := testenv.CTool(t, "perf")
	testenv.CTool(t, "ib_write_lat")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	args := []string{"-d", d.Name, "-x", strconv.Itoa(gidx), "-tests", "write_lat", "-loop", "1s", "-perf", perf, "-o", t.TempDir(), "-rperf", rperf}
	if rc := profile(ctx, args, &out, &errOut); rc != 0 {
		t.Fatalf("profile exited %d: %s\n%s", rc, errOut.String(), out.String())
	}
	t.Logf("%s", out.String())
	for _, tc := range []struct {
		row string
		min float64 // each side's share must be at least this
	}{
		{"the tool's processes (server and client)", 20},
		{"… user: the tool's loop (rperf's main package; perftest's program)", 5},
		{"rxe's work in any thread (the per-message clock)", 0.1},
	} {
		cells, ok := profileCells(out.String(), tc.row)
		if !ok {
			t.Errorf("no row %q", tc.row)
			continue
		}
		for i, side := range []string{stackGo, stackC} {
			if cells[i] < tc.min {
				t.Errorf("%q: %s %.1f %%, want at least %v %%", tc.row, side, cells[i], tc.min)
			}
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

package fetch

import (
	"errors"
	"io"
	"testing"
)

func TestNextStep(t *testing.T) {
	for _, c := range []struct {
		name          string
		before, after int
		want          listStep
	}{
		{"stale lists, never refreshed", 0, 0, refreshFirst},
		{"refreshed before the attempt", 1, 1, giveUp},
		{"the attempt refreshed (an Install in it)", 0, 1, tryAgain},
		{"foreignArch's second update during the attempt", 1, 2, tryAgain},
		{"both updates before the attempt", 2, 2, giveUp},
	} {
		if got := nextStep(c.before, c.after); got != c.want {
			t.Errorf("%s: nextStep(%d, %d) = %d, want %d", c.name, c.before, c.after, got, c.want)
		}
	}
}

// TestWithListsAttempts runs WithLists on attempts that stand for apt
// without calling it: refreshes is set as refresh would set it, so that
// no apt-get update runs.
func TestWithListsAttempts(t *testing.T) {
	fail := errors.New("E: Unable to locate package")
	for _, c := range []struct {
		name string
		// refreshed: the process refreshed the lists before.
		refreshed bool
		// results of the attempts in turn; refreshIn marks the attempt
		// that refreshes the lists itself (an Install inside it).
		results   []error
		refreshIn int
		wantRuns  int
		wantErr   bool
		// wantRefreshes counts the attempt's own and WithLists'.
		wantRefreshes int
	}{
		{"warm: the first attempt works", false, []error{nil}, -1, 1, false, 0},
		{"stale: works after the refresh", false, []error{fail, nil}, -1, 2, false, 1},
		{"missing for good: one refresh, two attempts", false, []error{fail, fail, nil}, -1, 2, true, 1},
		{"already refreshed: no second try", true, []error{fail, nil}, -1, 1, true, 1},
		{"the attempt refreshed, then failed: tried again", false, []error{fail, nil}, 0, 2, false, 1},
		{"the attempt refreshed, failed twice", false, []error{fail, fail, nil}, 0, 2, true, 1},
	} {
		e := &Env{Log: io.Discard}
		if c.refreshed {
			e.refreshes = 1
		}
		runs := 0
		attempt := func() error {
			if runs == c.refreshIn {
				e.refreshes++
			}
			err := c.results[runs]
			runs++
			return err
		}
		// refresh would run apt-get update: stand in for it.
		e.testRefresh = func() { e.refreshes++ }
		err := e.WithLists("test", attempt)
		if runs != c.wantRuns || (err != nil) != c.wantErr {
			t.Errorf("%s: %d attempts, error %v; want %d attempts, error %v", c.name, runs, err, c.wantRuns, c.wantErr)
		}
		if e.refreshes != c.wantRefreshes {
			t.Errorf("%s: %d refreshes, want %d", c.name, e.refreshes, c.wantRefreshes)
		}
	}
}

func TestCandidateLine(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"librpma-dev:\n  Installed: (none)\n  Candidate: 1.2.0-2\n  Version table:\n", "1.2.0-2"},
		{"librpma-dev:\n  Installed: (none)\n  Candidate: (none)\n", ""},
		{"", ""},
	} {
		if got := candidateOf(c.out); got != c.want {
			t.Errorf("candidateOf(%q) = %q, want %q", c.out, got, c.want)
		}
	}
}

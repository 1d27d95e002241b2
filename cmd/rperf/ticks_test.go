package main

import (
	"slices"
	"testing"
	"time"
)

func BenchmarkNowClock(b *testing.B) {
	base := time.Now()
	var s int64
	for b.Loop() {
		s += int64(time.Since(base))
	}
	_ = s
}

func BenchmarkNowTicks(b *testing.B) {
	var s int64
	for b.Loop() {
		s += ticks()
	}
	_ = s
}

func TestInNs(t *testing.T) {
	at := time.Unix(1000, 0)
	for _, tc := range []struct {
		name       string
		ts         []int64
		start, end clockMark
		want       []int64
	}{
		// 3 GHz: 3000 ticks in 1 µs.
		{"3 GHz", []int64{5000, 8000, 11000}, clockMark{5000, at}, clockMark{11000, at.Add(2 * time.Microsecond)}, []int64{0, 1000, 2000}},
		// A counter in ns already (ticks_other.go).
		{"ns", []int64{100, 250}, clockMark{100, at}, clockMark{300, at.Add(200)}, []int64{0, 150}},
		// A counter that did not move: scaled by 1, not divided by 0.
		{"still", []int64{7, 7}, clockMark{7, at}, clockMark{7, at}, []int64{0, 0}},
	} {
		inNs(tc.ts, tc.start, tc.end)
		if !slices.Equal(tc.ts, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.ts, tc.want)
		}
	}
}

// TestTicksMove: the counter runs forward, at a rate inNs can use.
func TestTicksMove(t *testing.T) {
	start := mark()
	time.Sleep(5 * time.Millisecond)
	end := mark()
	if end.ticks <= start.ticks {
		t.Fatalf("ticks %d then %d", start.ticks, end.ticks)
	}
}

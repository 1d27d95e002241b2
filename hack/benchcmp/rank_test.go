package main

import (
	"math"
	"slices"
	"testing"
)

func TestUDistribution(t *testing.T) {
	for _, tc := range []struct {
		n, m int
		want []float64
	}{
		{1, 1, []float64{1, 1}},
		{2, 2, []float64{1, 1, 2, 1, 1}},
		{3, 3, []float64{1, 1, 2, 3, 3, 3, 3, 2, 1, 1}},
		{2, 3, []float64{1, 1, 2, 2, 2, 1, 1}},
	} {
		if got := uDistribution(tc.n, tc.m); !slices.Equal(got, tc.want) {
			t.Errorf("uDistribution(%d, %d) = %v, want %v", tc.n, tc.m, got, tc.want)
		}
	}
}

func TestRankP(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name string
		a, b []float64
		want float64
	}{
		// 3 against 3 apart: 1 order of 20 each way.
		{"3 below 3", []float64{1, 2, 3}, []float64{4, 5, 6}, 0.1},
		{"3 above 3", []float64{4, 5, 6}, []float64{1, 2, 3}, 0.1},
		// 9 against 9 apart: 2 orders of C(18, 9) = 48620.
		{"9 below 9", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, []float64{10, 11, 12, 13, 14, 15, 16, 17, 18}, 2.0 / 48620},
		// Interleaved, U = 3 (3>2, 5>2, 5>4): orders with U <= 3 are
		// 7 of 20.
		{"interleaved", []float64{1, 3, 5}, []float64{2, 4, 6}, 0.7},
		// U = 1 (one pair won): orders with U <= 1 are 2 of 20.
		{"one pair", []float64{1, 2, 4}, []float64{3, 5, 6}, 0.2},
		// Half of the pairs each way: p 1.
		{"even", []float64{1, 4}, []float64{2, 3}, nan},
		{"even 4", []float64{1, 4, 5, 8}, []float64{2, 3, 6, 7}, 1},
		// A tie, U = 0.5: counted as U <= 1, 2 of 20.
		{"tie", []float64{1, 2, 4}, []float64{4, 5, 6}, 0.2},
		{"failed runs left out", []float64{1, nan, 2, 3}, []float64{4, 5, math.Inf(1), 6}, 0.1},
		{"too few", []float64{1, 2}, []float64{3, 4, 5}, nan},
	} {
		got := rankP(tc.a, tc.b)
		if math.IsNaN(tc.want) != math.IsNaN(got) || !math.IsNaN(got) && math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: rankP = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPCell(t *testing.T) {
	for _, tc := range []struct {
		goV, cV []float64
		want    string
	}{
		{[]float64{1, 2, 3}, []float64{4, 5, 6}, "0.100"},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, []float64{10, 11, 12, 13, 14, 15, 16, 17, 18}, "<0.001"},
		{[]float64{1}, []float64{2}, "n/a"},
	} {
		if got := pCell(row{goV: tc.goV, cV: tc.cV}); got != tc.want {
			t.Errorf("pCell(%v, %v) = %q, want %q", tc.goV, tc.cV, got, tc.want)
		}
	}
}

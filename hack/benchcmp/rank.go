package main

import (
	"math"
	"strconv"

	"github.com/purerdma/purerdma/internal/perftest"
)

// rankP is the two-sided p-value of the Mann–Whitney rank test of a and
// b (their finite values): how likely a difference between the two
// sides at least as large as the one measured is when both sides' runs
// come from one distribution. The rounds are few and their spread under
// TCG is wide (a row's per-round ratios often span 0.6–1.6), so a median
// ratio off 1.00 says little by itself; this says whether the rows'
// rounds tell the sides apart at all. Exact (the count of rank orders),
// with ties counted half to each side, which makes it a little
// conservative. NaN with fewer than 3 values on a side.
func rankP(a, b []float64) float64 {
	a, b = perftest.Finite(a), perftest.Finite(b)
	n, m := len(a), len(b)
	if n < 3 || m < 3 {
		return math.NaN()
	}
	// u2 is twice U of a: how many of the pairs a wins, ties halved.
	u2 := 0
	for _, x := range a {
		for _, y := range b {
			switch {
			case x > y:
				u2 += 2
			case x == y:
				u2++
			}
		}
	}
	// Under the null every order of the n+m ranks is as likely: count
	// the orders by U (cnt[u], u from 0 to n*m), growing one side at a
	// time (f(i, j, u) = f(i-1, j, u-j) + f(i, j-1, u)).
	cnt := uDistribution(n, m)
	total := 0.0
	for _, c := range cnt {
		total += c
	}
	// Each tail from the measured U outwards; a U with a half (a tie)
	// is rounded into both tails, which can only make p larger.
	lo, hi := (u2+1)/2, u2/2 // P(U <= lo), P(U >= hi)
	below, above := 0.0, 0.0
	for u, c := range cnt {
		if u <= lo {
			below += c
		}
		if u >= hi {
			above += c
		}
	}
	return min(1, 2*min(below, above)/total)
}

// uDistribution is how many of the orders of n and m ranks have each
// value of U (the count of pairs in which the first side's rank is the
// higher), indexed by U.
func uDistribution(n, m int) []float64 {
	// f[j][u] for the current i.
	f := make([][]float64, m+1)
	for j := range f {
		f[j] = make([]float64, n*m+1)
		f[j][0] = 1 // i = 0: one order, U 0
	}
	for i := 1; i <= n; i++ {
		g := make([][]float64, m+1)
		for j := range g {
			g[j] = make([]float64, n*m+1)
			for u := range g[j] {
				// The highest rank is the first side's (it beats
				// all j of the other) or the other side's.
				if u >= j {
					g[j][u] += f[j][u-j]
				}
				if j > 0 {
					g[j][u] += g[j-1][u]
				}
			}
		}
		f = g
	}
	return f[m]
}

// pCell is rankP for the table: two digits, "<0.001" below that, "n/a"
// without enough rounds.
func pCell(r row) string {
	p := rankP(r.goV, r.cV)
	switch {
	case math.IsNaN(p):
		return "n/a"
	case p < 0.001:
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

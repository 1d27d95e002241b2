//go:build amd64 || arm64

package main

// ticks reads the CPU's counter (the TSC, arm64's virtual counter), as
// perftest timestamps each post and completion: a few instructions where
// Go's clock is a vDSO call on the system stack.
func ticks() int64

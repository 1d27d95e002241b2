//go:build !linux

package spin

// processBarrier has no membarrier outside Linux: a Gate's owner takes
// the lock there.
type processBarrier struct{}

func (processBarrier) ready() bool { return false }

func (processBarrier) run() {}

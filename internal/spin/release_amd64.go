//go:build !race

package spin

import "sync/atomic"

// The lock's and the owner's release stores on amd64: plain stores, which
// x86-TSO never reorders with an earlier load or store, and which the
// compiler keeps after the caller's earlier accesses (mem.StoreRelease
// says why; docs/memory-ordering.md). Written here, in each method,
// rather than through mem.StoreRelease: an inlined call leaves the
// compiler an inline mark, a NOP on every post, poll and arm, when no
// instruction of the caller shares its line (Gate). release_other.go has
// the same methods with sync/atomic's stores.

// UnlockFree gives back a lock taken by TryLockFree: one release store.
// Nobody owned the gate then, and only a holder of the lock can give it
// an owner (Own), so neither the gate nor the idle word needs a look.
func (l *GateLock) UnlockFree() { l.v = 0 }

// Enter lets the owner in and reports whether it is: false when the gate
// is shut or was never opened, and the owner must take the lock instead.
// Only the owner calls it, and Leave after a true.
//
// The true return is written first, in the taken branch: so shaped, the
// caller's test of the result compiled to fewer instructions (one to four
// fewer per owned poll). A gate without an owner has open 0 or less, so
// the owner of none (a released handle) stores busy and finds it shut.
func (l *GateLock) Enter() bool {
	l.gate.busy = 1
	if atomic.LoadInt32(&l.gate.open) == 1 {
		return true
	}
	l.gate.busy = 0
	return false
}

// Leave lets the owner out: what it did inside is visible before.
func (l *GateLock) Leave() { l.gate.busy = 0 }

// Unlock gives the lock back: every load and store made under it is
// visible before it is free (a MOV on amd64, an STLR on arm64; under the
// race detector an atomic store, which the detector sees).
func (l *Lock) Unlock() { l.v = 0 }

// storeRelease is the release store of the lock's slow ways.
func storeRelease(p *uint32, v uint32) { *p = v }

//go:build !amd64 || race

package spin

import "sync/atomic"

// The lock's and the owner's release stores elsewhere and under the race
// detector: sync/atomic's Store, an STLR on arm64 (a release store) and
// sequentially consistent elsewhere, which the race detector sees. The
// methods are release_amd64.go's, documented there.

func (l *GateLock) UnlockFree() { atomic.StoreUint32(&l.v, 0) }

func (l *GateLock) Enter() bool {
	atomic.StoreUint32(&l.gate.busy, 1)
	if atomic.LoadInt32(&l.gate.open) == 1 {
		return true
	}
	atomic.StoreUint32(&l.gate.busy, 0)
	return false
}

func (l *GateLock) Leave() { atomic.StoreUint32(&l.gate.busy, 0) }

func (l *Lock) Unlock() { atomic.StoreUint32(&l.v, 0) }

func storeRelease(p *uint32, v uint32) { atomic.StoreUint32(p, v) }

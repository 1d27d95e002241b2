// Package spin has the lock of the data path: what a post, a poll or an
// arm takes, and what Close, Modify and Resize take to keep them out while
// they change or unmap a ring.
//
// sync.Mutex costs two locked instructions per critical section (LOCK
// CMPXCHG to lock, LOCK XADD to unlock, for the waiter count); rdma-core's
// pthread_spin_lock costs one, its unlock being a plain store. Lock here is
// one CAS to take and a release store to give back, so a post or a poll
// pays one locked instruction, as in C (docs/benchmarks-host.md). The
// price is that Unlock wakes nobody: a waiter finds the lock free by
// looking, first spinning, then yielding its P, then sleeping in growing
// steps up to maxSleep, which only a holder that stays long (a destroy
// command in the kernel) makes anyone reach.
package spin

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Lock is a mutual exclusion lock; the zero value is unlocked. It
// implements sync.Locker. It is not reentrant, and unlocking an unlocked
// Lock is a bug it does not detect. Its word is used through sync/atomic's
// functions, as Gate's are (Gate says why).
type Lock struct{ v uint32 }

// The waiting schedule: spins before yielding, yields before sleeping,
// and the longest sleep between two looks. A sleeping waiter wakes at
// most maxSleep after the holder left.
const (
	spins    = 64
	yields   = 1024
	maxSleep = 100 * time.Microsecond
)

// Lock takes the lock, waiting until it is free.
func (l *Lock) Lock() {
	if !atomic.CompareAndSwapUint32(&l.v, 0, 1) {
		l.wait()
	}
}

// TryLock takes the lock if it is free and reports whether it did.
func (l *Lock) TryLock() bool {
	return atomic.LoadUint32(&l.v) == 0 && atomic.CompareAndSwapUint32(&l.v, 0, 1)
}

// wait is the contended path, out of line so that Lock inlines into the
// data path. It reads before it tries, so that waiters do not take the
// cache line from the holder with failing CASes.
//
//go:noinline
func (l *Lock) wait() {
	sleep := time.Microsecond
	for i := 0; !l.TryLock(); i++ {
		backoff(i, &sleep)
	}
}

// backoff is the waiting schedule's step i: spin, then yield the P, then
// sleep, *sleep growing up to maxSleep.
func backoff(i int, sleep *time.Duration) {
	switch {
	case i < spins:
	case i < spins+yields:
		runtime.Gosched()
	default:
		time.Sleep(*sleep)
		*sleep = min(2**sleep, maxSleep)
	}
}

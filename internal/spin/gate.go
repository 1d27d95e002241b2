package spin

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/purerdma/purerdma/internal/provider/mem"
)

// Gate lets one goroutine, an object's owner, into the object's data path
// without a locked instruction, and keeps it out while another goroutine,
// holding the object's lock, changes or unmaps what the owner uses: the
// memory-safe form of rdma-core's thread domains, whose lock-free queues
// leave that exclusion to the user.
//
// The owner announces itself with a release store and then reads whether
// the gate is shut; whoever shuts it waits until the owner is out. Each
// side stores, then loads the other's word (Dekker's pattern), which needs
// a full barrier on both sides: on amd64 a store may pass a later load
// (store buffering). The owner's barrier is paid by the other side with
// membarrier(2) (MEMBARRIER_CMD_PRIVATE_EXPEDITED): every running thread
// of the process executes a full barrier before the call returns, so
// either the owner's store is visible after it, or the owner's load comes
// after it and sees the gate shut. The rare side (Close, Modify, Resize)
// pays a system call; the owner's side is two plain stores and a load.
// Where membarrier is missing, Own reports false and the owner takes the
// lock instead.
//
// Whether the owner may enter is one word, open: 1 for an owner (Own)
// less 1 for each Shut not yet undone, so that Enter tests one load
// against 1; the zero Gate, never owned, lets no one in.
type Gate struct {
	busy atomic.Uint32 // 1 while the owner is inside; only the owner stores it
	open atomic.Int32  // 1 while the owner may enter: owned (1) less the Shuts in force
	on   atomic.Bool   // the gate has an owner (Own); set under the lock
}

// Own opens the gate to an owner and reports whether the owner may enter
// without the lock (membarrier works here). Hold the object's lock.
func (g *Gate) Own() bool {
	ok := barrierAll.ready()
	if ok && !g.on.Load() {
		g.open.Add(1)
	}
	g.on.Store(ok)
	return ok
}

// Disown ends the ownership. Hold the object's lock and have the gate
// shut, so that the owner is not inside.
func (g *Gate) Disown() {
	if g.on.Load() {
		g.open.Add(-1)
	}
	g.on.Store(false)
}

// Owned reports whether an owner may be inside. Hold the object's lock.
func (g *Gate) Owned() bool { return g.on.Load() }

// Enter lets the owner in and reports whether it is: false when the gate
// is shut or was never opened, and the owner must take the lock instead.
// Only the owner calls it, and Leave after a true.
//
// The true return is written first, in the taken branch: so shaped, the
// caller's test of the result compiled to fewer instructions (one to four
// fewer per owned poll). A gate without an owner has open 0 or less, so
// the owner of none (a released handle) stores busy and finds it shut.
func (g *Gate) Enter() bool {
	mem.StoreRelease(&g.busy, 1)
	if g.open.Load() == 1 {
		return true
	}
	mem.StoreRelease(&g.busy, 0)
	return false
}

// Leave lets the owner out: what it did inside is visible before.
func (g *Gate) Leave() { mem.StoreRelease(&g.busy, 0) }

// Shut keeps the owner out until Open and waits until it has left. Hold
// the object's lock. Shutting a gate that was never opened costs an
// atomic add.
func (g *Gate) Shut() {
	g.open.Add(-1)
	if !g.on.Load() {
		return
	}
	barrierAll.run()
	for i := 0; g.busy.Load() != 0; i++ {
		if i >= spins {
			runtime.Gosched()
		}
	}
}

// Open undoes one Shut.
func (g *Gate) Open() { g.open.Add(1) }

// GateLock is a Lock with a Gate for an owner: whoever takes the lock
// while an owner may be inside shuts the gate first, so that the lock
// keeps out everyone, the owner included, as a plain Lock does. Own,
// Disown and Owned need the lock held; Enter and Leave are the owner's.
//
// The lock word says both whether the lock is held and whether the gate
// has an owner, so that taking it without an owner is Lock's one CAS
// from 0, inline.
type GateLock struct {
	v        atomic.Uint32 // lockHeld | lockOwned
	gate     Gate
	idle     uint32 // what Unlock stores: lockOwned when owned, else 0; under the lock
	shutHeld bool   // the holder shut the gate when it took the lock
}

const (
	lockHeld  = 1
	lockOwned = 2
)

// Lock takes the lock and, on an owned gate, keeps the owner out.
func (l *GateLock) Lock() {
	if !l.v.CompareAndSwap(0, lockHeld) {
		l.lockSlow()
	}
}

// lockSlow is Lock when the lock is held or the gate owned: it waits as
// Lock.wait does, then shuts an owned gate.
//
//go:noinline
func (l *GateLock) lockSlow() {
	sleep := time.Microsecond
	for i := 0; !l.TryLock(); i++ {
		backoff(i, &sleep)
	}
}

// TryLock takes the lock if it is free, as Lock does, and reports whether
// it did.
func (l *GateLock) TryLock() bool {
	v := l.v.Load()
	if v&lockHeld != 0 || !l.v.CompareAndSwap(v, v|lockHeld) {
		return false
	}
	if v&lockOwned != 0 {
		l.gate.Shut()
		l.shutHeld = true
	}
	return true
}

// TryLockFree takes the lock if it is free and the gate has no owner,
// with Lock's one CAS, and reports whether it did; then UnlockFree gives
// it back. It is the data path's way in: the caller sends a false to its
// own out-of-line path, which takes Lock and so waits or shuts an owned
// gate. Lock's slow-path call, inline in the caller, made the compiler
// keep the caller's arguments and results on the stack around it, on the
// fast path too (docs/benchmarks-host.md, fourth pass).
func (l *GateLock) TryLockFree() bool { return l.v.CompareAndSwap(0, lockHeld) }

// UnlockFree gives back a lock taken by TryLockFree: one release store.
// Nobody owned the gate then, and only a holder of the lock can give it
// an owner (Own), so neither the gate nor the idle word needs a look.
func (l *GateLock) UnlockFree() { mem.StoreRelease(&l.v, 0) }

// Unlock lets the owner back in and gives the lock back.
func (l *GateLock) Unlock() {
	if l.shutHeld {
		l.openOwner()
	}
	mem.StoreRelease(&l.v, l.idle)
}

// openOwner is Unlock's owned case, out of line so that Unlock inlines.
//
//go:noinline
func (l *GateLock) openOwner() {
	l.shutHeld = false
	l.gate.Open()
}

// Own opens the gate to an owner (Gate.Own) and reports whether the owner
// may enter without the lock. Hold the lock.
func (l *GateLock) Own() bool {
	if !l.gate.Own() {
		return false
	}
	l.idle = lockOwned
	return true
}

// Disown closes the gate to the owner for good. Hold the lock.
func (l *GateLock) Disown() {
	l.gate.Disown()
	l.idle = 0
}

// Owned reports whether the gate has an owner. Hold the lock.
func (l *GateLock) Owned() bool { return l.gate.Owned() }

// Enter lets the owner in without the lock, or reports false: then it
// takes the lock.
func (l *GateLock) Enter() bool { return l.gate.Enter() }

// Leave lets the owner out.
func (l *GateLock) Leave() { l.gate.Leave() }

// barrierAll is the process's membarrier: registered once, then run by
// every Shut of an owned gate.
var barrierAll processBarrier

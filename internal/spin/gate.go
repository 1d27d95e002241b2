package spin

import (
	"runtime"
	"sync/atomic"
	"time"
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
//
// busy and open are plain words used through sync/atomic's functions,
// not its types: a method of atomic.Uint32 is a wrapper the compiler
// inlines, and each inlined call whose line no instruction of the caller
// shares leaves an inline mark, a NOP, on the data path (one to three per
// post, poll or arm). The owner's and the lock's release stores
// (GateLock.Enter, Leave, UnlockFree) are written out per architecture
// for the same reason (release_amd64.go, release_other.go).
type Gate struct {
	busy uint32      // 1 while the owner is inside; only the owner stores it
	open int32       // 1 while the owner may enter: owned (1) less the Shuts in force
	on   atomic.Bool // the gate has an owner (Own); set under the lock
}

// Own opens the gate to an owner and reports whether the owner may enter
// without the lock (membarrier works here). Hold the object's lock.
func (g *Gate) Own() bool {
	ok := barrierAll.ready()
	if ok && !g.on.Load() {
		atomic.AddInt32(&g.open, 1)
	}
	g.on.Store(ok)
	return ok
}

// Disown ends the ownership. Hold the object's lock and have the gate
// shut, so that the owner is not inside.
func (g *Gate) Disown() {
	if g.on.Load() {
		atomic.AddInt32(&g.open, -1)
	}
	g.on.Store(false)
}

// Owned reports whether an owner may be inside. Hold the object's lock.
func (g *Gate) Owned() bool { return g.on.Load() }

// Shut keeps the owner out until Open and waits until it has left. Hold
// the object's lock. Shutting a gate that was never opened costs an
// atomic add.
func (g *Gate) Shut() {
	atomic.AddInt32(&g.open, -1)
	if !g.on.Load() {
		return
	}
	barrierAll.run()
	for i := 0; atomic.LoadUint32(&g.busy) != 0; i++ {
		if i >= spins {
			runtime.Gosched()
		}
	}
}

// Open undoes one Shut.
func (g *Gate) Open() { atomic.AddInt32(&g.open, 1) }

// GateLock is a Lock with a Gate for an owner: whoever takes the lock
// while an owner may be inside shuts the gate first, so that the lock
// keeps out everyone, the owner included, as a plain Lock does. Own,
// Disown and Owned need the lock held; Enter and Leave are the owner's.
//
// The lock word says both whether the lock is held and whether the gate
// has an owner, so that taking it without an owner is Lock's one CAS
// from 0, inline.
type GateLock struct {
	v        uint32 // lockHeld | lockOwned; through sync/atomic's functions (Gate)
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
	if !atomic.CompareAndSwapUint32(&l.v, 0, lockHeld) {
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
	v := atomic.LoadUint32(&l.v)
	if v&lockHeld != 0 || !atomic.CompareAndSwapUint32(&l.v, v, v|lockHeld) {
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
func (l *GateLock) TryLockFree() bool { return atomic.CompareAndSwapUint32(&l.v, 0, lockHeld) }

// Unlock lets the owner back in and gives the lock back.
func (l *GateLock) Unlock() {
	if l.shutHeld {
		l.openOwner()
	}
	storeRelease(&l.v, l.idle)
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

// barrierAll is the process's membarrier: registered once, then run by
// every Shut of an owned gate.
var barrierAll processBarrier

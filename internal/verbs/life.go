package verbs

import (
	"errors"
	"fmt"

	"github.com/purerdma/purerdma/internal/spin"
	"github.com/purerdma/purerdma/internal/ucmd"
)

// Life is what every kernel object shares: a lock that its operations and
// its destruction take, and whether it is gone.
type Life struct {
	mu     spin.GateLock // one locked instruction on the data path (package spin), none for an owner
	closed bool
}

// Lock locks the object.
func (l *Life) Lock() { l.mu.Lock() }

// TryLockFree locks the object if the lock is free and it has no owner
// (spin.GateLock.TryLockFree): the data path's fast way in. Give it back
// with UnlockFree.
func (l *Life) TryLockFree() bool { return l.mu.TryLockFree() }

// UnlockFree unlocks what TryLockFree locked.
func (l *Life) UnlockFree() { l.mu.UnlockFree() }

// Unlock unlocks the object.
func (l *Life) Unlock() { l.mu.Unlock() }

// Err returns ErrClosed if the object was destroyed, so that a method can
// report a closed object before it looks at its arguments.
func (l *Life) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	return nil
}

// Own gives the object's data path to one goroutine, which enters it
// without the lock (Enter). It fails with ErrBusy while another owner has
// it. Where the gate cannot open (no membarrier, spin.Gate), the owner
// always takes the lock: it stays correct, only slower.
func (l *Life) Own() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return ErrClosed
	case l.mu.Owned():
		return fmt.Errorf("it has an owner already: %w", ErrBusy)
	}
	l.mu.Own()
	return nil
}

// Disown takes the data path back from its owner.
func (l *Life) Disown() {
	l.mu.Lock()
	l.mu.Disown()
	l.mu.Unlock()
}

// Enter lets the owner into the data path without the lock, or reports
// false: then it takes the lock (the object is changing, gone or
// disowned).
func (l *Life) Enter() bool { return l.mu.Enter() }

// Leave lets the owner out.
func (l *Life) Leave() { l.mu.Leave() }

// Gone reports whether the object was destroyed. Hold the lock.
func (l *Life) Gone() bool { return l.closed }

// Do runs a command about the object on ctx unless the object is gone,
// holding its lock so that it cannot be destroyed half-way.
func (l *Life) Do(ctx *Context, cmd *ucmd.Cmd) error {
	return l.live(func() error { return ctx.Do(cmd) })
}

// Run runs an ioctl method about the object on ctx unless the object is
// gone, holding its lock as Do does.
func (l *Life) Run(ctx *Context, m *ucmd.Method) error {
	return l.live(func() error { return ctx.Run(m) })
}

// live runs f under the lock unless the object is gone.
func (l *Life) live(f func() error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	return f()
}

// Destroy destroys the object once: it runs the destroy command on ctx,
// then release. When the context is already closed the kernel object went
// with it and only release runs. If the kernel refuses (EBUSY becomes
// ErrBusy), the object stays alive and usable.
func (l *Life) Destroy(ctx *Context, what string, cmd *ucmd.Cmd, release func()) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	if cmd != nil {
		if err := ctx.Do(cmd); err != nil && !errors.Is(err, ErrClosed) {
			return fmt.Errorf("%s: %w", what, Public(err))
		}
	}
	l.closed = true
	l.mu.Disown()
	if release != nil {
		release()
	}
	return nil
}

// Release marks the object gone and runs release, once; a closing context
// calls it for the objects it destroys.
func (l *Life) Release(release func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	l.mu.Disown()
	if release != nil {
		release()
	}
}

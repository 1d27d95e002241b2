package verbs

import (
	"errors"
	"fmt"

	"github.com/purerdma/purerdma/internal/spin"
	"github.com/purerdma/purerdma/internal/ucmd"
)

// Life is what every kernel object shares: a lock that its operations and
// its destruction take, and whether it is gone.
//
// The lock is embedded, not a field behind wrappers: its data path
// methods (Lock, Unlock, TryLockFree, UnlockFree, Enter, Leave) are
// promoted, and each wrapper level left an inline mark, an instruction
// per call, on every poll and arm.
type Life struct {
	spin.GateLock // one locked instruction on the data path (package spin), none for an owner
	closed        bool
}

// Err returns ErrClosed if the object was destroyed, so that a method can
// report a closed object before it looks at its arguments.
func (l *Life) Err() error {
	l.GateLock.Lock()
	defer l.GateLock.Unlock()
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
	l.GateLock.Lock()
	defer l.GateLock.Unlock()
	switch {
	case l.closed:
		return ErrClosed
	case l.GateLock.Owned():
		return fmt.Errorf("it has an owner already: %w", ErrBusy)
	}
	l.GateLock.Own()
	return nil
}

// Disown takes the data path back from its owner.
func (l *Life) Disown() {
	l.GateLock.Lock()
	l.GateLock.Disown()
	l.GateLock.Unlock()
}

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
	l.GateLock.Lock()
	defer l.GateLock.Unlock()
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
	l.GateLock.Lock()
	defer l.GateLock.Unlock()
	if l.closed {
		return nil
	}
	if cmd != nil {
		if err := ctx.Do(cmd); err != nil && !errors.Is(err, ErrClosed) {
			return fmt.Errorf("%s: %w", what, Public(err))
		}
	}
	l.closed = true
	l.GateLock.Disown()
	if release != nil {
		release()
	}
	return nil
}

// Release marks the object gone and runs release, once; a closing context
// calls it for the objects it destroys.
func (l *Life) Release(release func()) {
	l.GateLock.Lock()
	defer l.GateLock.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	l.GateLock.Disown()
	if release != nil {
		release()
	}
}

package verbs

import (
	"sync"

	"github.com/purerdma/purerdma/internal/provider"
)

// Link ties a public object to its core: a *uverbs.Context to its
// *Context, a *uverbs.PD to its *PD. cq and mr need those cores, but
// uverbs imports this package, so nothing here can name a uverbs type,
// and uverbs must not export its plumbing.
//
// The public type embeds a Link under an unexported alias,
//
//	type contextLink = verbs.Link[*verbs.Context]
//	type Context struct { contextLink; ... }
//
// so the field is unexported and nothing of it shows in go doc, while the
// promoted unexported method verbsCore makes the public type satisfy
// owner, which only this package can name (testing.TB's private method
// works the same way). ContextOf and PDOf are therefore typed, checked by
// the compiler, and need neither a hook installed in init nor a type
// assertion: only a type that embeds the right Link satisfies their
// constraint, and only uverbs embeds one.
type Link[C any] struct{ core C }

// NewLink returns the link to core.
func NewLink[C any](core C) Link[C] { return Link[C]{core} }

func (l *Link[C]) verbsCore() C { return l.core }

// owner is a pointer to a public type that embeds Link[C].
type owner[C any, T any] interface {
	*T
	verbsCore() C
}

// coreOf returns the core behind p, or the zero C for a nil p: a nil
// *uverbs.Context is a caller's error to report, not a panic.
func coreOf[C any, P owner[C, T], T any](p P) C {
	if p == nil {
		var zero C
		return zero
	}
	return p.verbsCore()
}

// ContextOf returns the context behind a *uverbs.Context, nil for nil.
func ContextOf[P owner[*Context, T], T any](p P) *Context { return coreOf[*Context](p) }

// PDOf returns the protection domain behind a *uverbs.PD, nil for nil.
func PDOf[P owner[*PD, T], T any](p P) *PD { return coreOf[*PD](p) }

// CQOf returns the driver's CQ behind a CQ a QP is being created with,
// nil if cq is not a *cq.CQ (or a type embedding one). A *cq.CQ embeds a
// Link[provider.CQ] as the context does a Link[*Context]; but a QP names
// its CQs by uverbs.CQ, an interface, so this accessor has to assert.
// cq must not be a nil pointer: uverbs has checked its context first.
func CQOf(cq any) provider.CQ {
	if o, ok := cq.(interface{ verbsCore() provider.CQ }); ok {
		return o.verbsCore()
	}
	return nil
}

// LockLink gives uverbs the lock of a public CQ, which a QP's driver takes
// when it changes the CQ's ring from the QP's side (provider.QPInit's
// SendCQLock). A *cq.CQ embeds one next to its Link[provider.CQ], under an
// unexported alias, as it does the Link.
type LockLink struct{ l sync.Locker }

// NewLockLink returns the link to l.
func NewLockLink(l sync.Locker) LockLink { return LockLink{l} }

func (l *LockLink) verbsLock() sync.Locker { return l.l }

// CQLockOf returns the lock behind a CQ a QP is being created with, nil if
// cq does not embed a LockLink.
func CQLockOf(cq any) sync.Locker {
	if o, ok := cq.(interface{ verbsLock() sync.Locker }); ok {
		return o.verbsLock()
	}
	return nil
}

// SetQPReads tells uverbs how many RDMA reads and atomics a *uverbs.QP
// may have outstanding as initiator, where MODIFY_QP did not set it: on
// iWARP the kernel's connection manager moves the QP to RTS, and rdmacm
// reports the initiator depth it connected or accepted with. uverbs sets
// the function when it is initialised.
var SetQPReads func(qp any, depth uint8)

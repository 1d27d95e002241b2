package verbs

import (
	"errors"
	"syscall"

	"github.com/purerdma/purerdma/internal/provider"
)

// sentinel is an error of a kind that also matches something more
// general: the errno libibverbs or librdmacm would return for the same
// failure, so that callers may test either, or a broader sentinel (a
// private-data limit is an invalid argument). Matching goes through Is,
// so returning one allocates nothing.
type sentinel struct {
	msg  string
	kind error
}

func (e *sentinel) Error() string        { return e.msg }
func (e *sentinel) Is(target error) bool { return errors.Is(e.kind, target) }

// NewSentinel returns a sentinel error with text msg that errors.Is also
// matches to kind and whatever kind matches. Its text is the bare kind,
// without a package prefix (docs/architecture.md, Errors): whoever
// returns it wrapped names the package.
func NewSentinel(msg string, kind error) error { return &sentinel{msg, kind} }

// The sentinels every public package shares; uverbs exports them, and
// cq, mr and rdmacm re-export the same values where their users need
// them. Each kind exists once.
var (
	ErrClosed      = NewSentinel("use of closed object", syscall.EBADF)
	ErrBusy        = NewSentinel("object in use", syscall.EBUSY)
	ErrInvalid     = NewSentinel("invalid argument", syscall.EINVAL)
	ErrQueueFull   = NewSentinel("queue full", syscall.ENOMEM)
	ErrUnsupported = NewSentinel("operation not supported", syscall.EOPNOTSUPP)
	// A device without a provider cannot do what the caller asked, so
	// ErrNoProvider is a kind of ErrUnsupported: a caller that falls
	// back on ErrUnsupported falls back on it too.
	ErrNoProvider = NewSentinel("no provider for this driver", ErrUnsupported)
)

// withKind is an error that reads as err but also matches kind: the
// mapping below adds a sentinel without repeating a word of the message.
type withKind struct{ err, kind error }

func (e *withKind) Error() string   { return e.err.Error() }
func (e *withKind) Unwrap() []error { return []error{e.err, e.kind} }

// Public maps an error from a provider or the kernel onto the public
// sentinel of its kind, keeping its text and everything it matched. It is
// the one place where provider errors become public ones:
//
//	provider.ErrFull        → ErrQueueFull
//	provider.ErrInvalid     → ErrInvalid
//	provider.ErrUnsupported → ErrUnsupported
//	provider.ErrClosed      → ErrClosed
//	EINVAL                  → ErrInvalid
//	EBUSY                   → ErrBusy
//	EOPNOTSUPP              → ErrUnsupported
//	EPROTONOSUPPORT         → ErrUnsupported
//
// The ioctl framework returns EPROTONOSUPPORT only when the kernel has no
// such object, method or attribute (uverbs_ioctl.c says so): a method
// newer than the kernel, which for the caller is a missing feature.
//
// An error that already matches its sentinel, or of no kind above, is
// returned as it is; so is nil, without allocating.
func Public(err error) error {
	if err == nil {
		return nil
	}
	var kind error
	switch {
	case errors.Is(err, provider.ErrFull):
		kind = ErrQueueFull
	case errors.Is(err, provider.ErrInvalid), errors.Is(err, syscall.EINVAL):
		kind = ErrInvalid
	case errors.Is(err, provider.ErrUnsupported), errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.EPROTONOSUPPORT):
		kind = ErrUnsupported
	case errors.Is(err, provider.ErrClosed):
		kind = ErrClosed
	case errors.Is(err, syscall.EBUSY):
		kind = ErrBusy
	default:
		return err
	}
	if errors.Is(err, kind) {
		return err
	}
	return &withKind{err, kind}
}

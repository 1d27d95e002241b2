package verbs

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// errnoSentinel is a sentinel error that also matches the errno libibverbs
// would return for the same failure, so that callers may test either.
type errnoSentinel struct {
	msg   string
	errno unix.Errno
}

func (e *errnoSentinel) Error() string        { return e.msg }
func (e *errnoSentinel) Is(target error) bool { return target == e.errno }

// The sentinels uverbs, cq and mr share; uverbs exports them.
var (
	ErrClosed      error = &errnoSentinel{"uverbs: use of closed object", unix.EBADF}
	ErrBusy        error = &errnoSentinel{"uverbs: object in use", unix.EBUSY}
	ErrInvalid     error = &errnoSentinel{"uverbs: invalid argument", unix.EINVAL}
	ErrQueueFull   error = &errnoSentinel{"uverbs: queue full", unix.ENOMEM}
	ErrNoProvider  error = &errnoSentinel{"uverbs: no provider for this driver", unix.EOPNOTSUPP}
	ErrUnsupported error = &errnoSentinel{"uverbs: operation not supported by the device", unix.EOPNOTSUPP}
)

// KernelErr adds the sentinel matching a kernel errno: ErrInvalid for
// EINVAL, ErrBusy for EBUSY.
func KernelErr(err error) error {
	switch {
	case errors.Is(err, unix.EINVAL) && !errors.Is(err, ErrInvalid):
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	case errors.Is(err, unix.EBUSY) && !errors.Is(err, ErrBusy):
		return fmt.Errorf("%w: %w", ErrBusy, err)
	}
	return err
}

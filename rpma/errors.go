package rpma

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Error is a librpma error code (RPMA_E_*).
type Error int

// The error codes of librpma; each is also a sentinel for errors.Is.
const (
	ErrUnknown          Error = -100000 // RPMA_E_UNKNOWN
	ErrNoSupp           Error = -100001 // RPMA_E_NOSUPP
	ErrProvider         Error = -100002 // RPMA_E_PROVIDER: wraps the errno
	ErrNoMem            Error = -100003 // RPMA_E_NOMEM
	ErrInval            Error = -100004 // RPMA_E_INVAL
	ErrNoCompletion     Error = -100005 // RPMA_E_NO_COMPLETION
	ErrNoEvent          Error = -100006 // RPMA_E_NO_EVENT
	ErrAgain            Error = -100007 // RPMA_E_AGAIN
	ErrSharedChannel    Error = -100008 // RPMA_E_SHARED_CHANNEL
	ErrNotSharedChannel Error = -100009 // RPMA_E_NOT_SHARED_CHNL
)

// Error returns rpma_err_2str's text.
func (e Error) Error() string {
	switch e {
	case 0:
		return "Success"
	case ErrNoSupp:
		return "Not supported"
	case ErrProvider:
		return "Provider error occurred"
	case ErrNoMem:
		return "Out of memory"
	case ErrInval:
		return "Invalid argument"
	case ErrNoCompletion:
		return "No next completion available"
	case ErrNoEvent:
		return "No next event available"
	case ErrAgain:
		return "Temporary error, try again"
	case ErrSharedChannel:
		return "Completion channel is shared"
	case ErrNotSharedChannel:
		return "Completion channel is not shared"
	}
	return "Unknown error"
}

// ErrString is rpma_err_2str.
func ErrString(code int) string { return Error(code).Error() }

// inval returns ErrInval with a reason.
func inval(format string, args ...any) error {
	return fmt.Errorf("rpma: %s: %w", fmt.Sprintf(format, args...), ErrInval)
}

// provider wraps a lower layer's error as ErrProvider, keeping its errno
// matchable.
func provider(what string, err error) error {
	if err == nil {
		return nil
	}
	var e Error
	if errors.As(err, &e) {
		return err
	}
	if errors.Is(err, unix.EBADF) { // uverbs.ErrClosed, rdmacm.ErrClosed
		return closedErr(what, err)
	}
	logf(LogError, "rpma: provider error", "op", what, "err", err)
	return fmt.Errorf("rpma: %s: %w: %w", what, ErrProvider, err)
}

// closedErr is the error of an operation on a closed object. librpma's
// delete functions set the caller's pointer to NULL, so that its next call
// gets RPMA_E_INVAL; Go cannot clear the caller's pointer, so a closed
// object answers as a nil one does. err is the lower layer's ErrClosed.
func closedErr(what string, err error) error {
	return fmt.Errorf("rpma: %s: closed object: %w: %w", what, ErrInval, err)
}

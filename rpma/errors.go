package rpma

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/purerdma/purerdma/internal/verbs"
	"github.com/purerdma/purerdma/uverbs"
)

// librpma's error codes (RPMA_E_*), as Code returns them.
const (
	CodeUnknown          = -100000 // RPMA_E_UNKNOWN: ErrUnknown, or an error of no librpma kind
	CodeNoSupp           = -100001 // RPMA_E_NOSUPP: ErrUnsupported
	CodeProvider         = -100002 // RPMA_E_PROVIDER: ErrProvider
	CodeNoMem            = -100003 // RPMA_E_NOMEM: ErrNoMem
	CodeInval            = -100004 // RPMA_E_INVAL: ErrInvalid, ErrClosed
	CodeNoCompletion     = -100005 // RPMA_E_NO_COMPLETION: ErrNoCompletion
	CodeNoEvent          = -100006 // RPMA_E_NO_EVENT: ErrNoEvent
	CodeAgain            = -100007 // RPMA_E_AGAIN: ErrAgain
	CodeSharedChannel    = -100008 // RPMA_E_SHARED_CHANNEL: ErrSharedChannel
	CodeNotSharedChannel = -100009 // RPMA_E_NOT_SHARED_CHNL: ErrNotSharedChannel
)

// The kinds of error the whole module shares are the same values here,
// so that errors.Is(err, uverbs.ErrInvalid) and errors.Is(err,
// rpma.ErrInvalid) agree, and each also matches its errno.
var (
	// ErrInvalid is librpma's RPMA_E_INVAL: an invalid argument, or a nil
	// object (librpma's NULL). It is uverbs.ErrInvalid and matches
	// syscall.EINVAL.
	ErrInvalid = uverbs.ErrInvalid
	// ErrClosed is returned by the methods of a closed object (after
	// Close). librpma's delete functions set the caller's pointer to
	// NULL, so that its next call gets RPMA_E_INVAL: Code maps ErrClosed
	// to CodeInval. It is uverbs.ErrClosed and matches syscall.EBADF.
	ErrClosed = uverbs.ErrClosed
	// ErrUnsupported is librpma's RPMA_E_NOSUPP: an operation the peer,
	// the region or this package cannot do. It is uverbs.ErrUnsupported
	// and matches syscall.EOPNOTSUPP.
	ErrUnsupported = uverbs.ErrUnsupported
)

// The kinds of error only librpma has. As the module's sentinels, their
// texts are the bare kind; the error that wraps one starts with "rpma: ".
var (
	// ErrUnknown is RPMA_E_UNKNOWN: something librpma did not expect,
	// such as a connection event it has no ConnEvent for.
	ErrUnknown = errors.New("unknown error")
	// ErrProvider is RPMA_E_PROVIDER: a lower layer (verbs, the
	// connection manager, the kernel) failed. The error also wraps that
	// layer's error, so that its sentinel and errno stay matchable:
	// errors.Is(err, syscall.ECONNREFUSED).
	ErrProvider = errors.New("provider error")
	// ErrNoMem is RPMA_E_NOMEM; it matches syscall.ENOMEM. Go's allocator
	// does not fail, so the package does not return it; the kernel's
	// ENOMEM comes as ErrProvider wrapping syscall.ENOMEM, as in librpma.
	ErrNoMem = verbs.NewSentinel("out of memory", syscall.ENOMEM)
	// ErrNoCompletion is RPMA_E_NO_COMPLETION, "no next completion
	// available". It is not a failure of the CQ, which stays usable:
	//   - CQ.GetWC and CQ.GetCompletion return it when the CQ holds no
	//     completion (rpma_cq_get_wc, rpma_cq_get_completion: the poll
	//     found none); wait with CQ.Wait or Conn.Wait, then ask again.
	//   - CQ.Wait and Conn.Wait return it when waiting on the completion
	//     channel failed for a reason other than ctx ending or the CQ
	//     being closed (rpma_cq_wait, rpma_conn_wait: ibv_get_cq_event
	//     failed); nothing was consumed, so poll with GetWC and wait
	//     again.
	ErrNoCompletion = errors.New("no next completion available")
	// ErrNoEvent is RPMA_E_NO_EVENT: no event or connection request is
	// pending (Endpoint.TryNextConnRequest, Conn.NextEvent).
	ErrNoEvent = errors.New("no next event available")
	// ErrAgain is RPMA_E_AGAIN; it matches syscall.EAGAIN. librpma returns it
	// only when its logging's atomics fail, which Go's cannot, so the
	// package does not return it.
	ErrAgain = verbs.NewSentinel("temporary error, try again", syscall.EAGAIN)
	// ErrSharedChannel is RPMA_E_SHARED_CHANNEL: CQ.Wait on a CQ whose
	// completion channel the connection shares; wait with Conn.Wait.
	ErrSharedChannel = errors.New("completion channel is shared")
	// ErrNotSharedChannel is RPMA_E_NOT_SHARED_CHNL: Conn.Wait or
	// Conn.CompletionFd on a connection whose CQs do not share a channel.
	ErrNotSharedChannel = errors.New("completion channel is not shared")
)

// kinds is every sentinel with its code, in the order Code tries them.
var kinds = []struct {
	err  error
	code int
}{
	{ErrProvider, CodeProvider},
	{ErrNoCompletion, CodeNoCompletion},
	{ErrNoEvent, CodeNoEvent},
	{ErrSharedChannel, CodeSharedChannel},
	{ErrNotSharedChannel, CodeNotSharedChannel},
	{ErrNoMem, CodeNoMem},
	{ErrAgain, CodeAgain},
	{ErrUnknown, CodeUnknown},
	{ErrInvalid, CodeInval},
	{ErrClosed, CodeInval},
	{ErrUnsupported, CodeNoSupp},
}

// Code returns the librpma code (RPMA_E_*) a C caller would have got for
// err: 0 for nil, CodeInval for ErrInvalid and ErrClosed, CodeNoSupp for
// ErrUnsupported, the sentinel's code for the other Err values, and
// CodeUnknown for an error of no librpma kind (such as ctx.Err() from a
// blocking call). An error the package returns has one kind: a provider
// error is CodeProvider even when the lower layer's error it wraps is,
// say, uverbs.ErrInvalid.
func Code(err error) int {
	if err == nil {
		return 0
	}
	// The package's own error knows its kind; what it wraps below that
	// does not count.
	var e *rpmaError
	if errors.As(err, &e) {
		err = e.kind
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.code
		}
	}
	return CodeUnknown
}

// CodeText returns librpma's text for a code, as rpma_err_2str does:
// "Success" for 0 and "Unknown error" for a code it does not know.
// CodeText(Code(err)) is the C text of err.
func CodeText(code int) string {
	switch code {
	case 0:
		return "Success"
	case CodeNoSupp:
		return "Not supported"
	case CodeProvider:
		return "Provider error occurred"
	case CodeNoMem:
		return "Out of memory"
	case CodeInval:
		return "Invalid argument"
	case CodeNoCompletion:
		return "No next completion available"
	case CodeNoEvent:
		return "No next event available"
	case CodeAgain:
		return "Temporary error, try again"
	case CodeSharedChannel:
		return "Completion channel is shared"
	case CodeNotSharedChannel:
		return "Completion channel is not shared"
	}
	return "Unknown error"
}

// rpmaError is an error the package made: its text, its kind (one of the
// Err values) and the lower layer's error it wraps, if any.
type rpmaError struct {
	text  string
	kind  error
	cause error
}

func (e *rpmaError) Error() string { return e.text }

func (e *rpmaError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

// errNil is a method's answer on a nil object, as librpma answers a NULL
// one.
var errNil error = &rpmaError{"rpma: nil object: " + ErrInvalid.Error(), ErrInvalid, nil}

// inval returns ErrInvalid with a reason.
func inval(format string, args ...any) error {
	return &rpmaError{"rpma: " + fmt.Sprintf(format, args...) + ": " + ErrInvalid.Error(), ErrInvalid, nil}
}

// unsupported returns ErrUnsupported with a reason.
func unsupported(format string, args ...any) error {
	return &rpmaError{"rpma: " + fmt.Sprintf(format, args...) + ": " + ErrUnsupported.Error(), ErrUnsupported, nil}
}

// provider wraps a lower layer's error as ErrProvider, keeping its errno
// matchable. An error the package made already passes through, and a
// closed lower object is the caller's closed object.
func provider(what string, err error) error {
	if err == nil {
		return nil
	}
	var e *rpmaError
	if errors.As(err, &e) {
		return err
	}
	if errors.Is(err, syscall.EBADF) { // uverbs.ErrClosed, rdmacm.ErrClosed
		return closedErr(what, err)
	}
	logf(LogError, "rpma: provider error", "op", what, "err", err)
	// The lower error's text names its package and kind; rpma adds its
	// name and the operation, and ErrProvider only to what it matches
	// (docs/architecture.md, Errors: no word twice).
	return &rpmaError{"rpma: " + what + ": " + err.Error(), ErrProvider, err}
}

// closedErr is the error of an operation on a closed object. cause is
// the lower layer's error, or nil when the package knew the object was
// closed.
func closedErr(what string, cause error) error {
	if cause == ErrClosed {
		cause = nil
	}
	text := "rpma: " + what + ": " + ErrClosed.Error()
	if cause != nil {
		text = "rpma: " + what + ": " + cause.Error()
	}
	return &rpmaError{text, ErrClosed, cause}
}

package rdmacm

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
)

// TestEventFail: an event this package fails itself keeps the error that
// failed it, text and all, rather than an errno squeezed out of it; Status
// still carries the errno for C-style printing, or EIO without one.
func TestEventFail(t *testing.T) {
	cause := fmt.Errorf("rdmacm: connect: QP to RTR: uverbs: modify QP 7: MODIFY_QP: %w", syscall.EINVAL)
	e := &Event{Type: EventConnectResponse}
	e.fail(EventConnectError, cause)
	if e.Type != EventConnectError || e.Status != -int(syscall.EINVAL) {
		t.Errorf("event %v, want CONNECT_ERROR with status -EINVAL", e)
	}
	if err := e.Err(); err != cause || !errors.Is(err, syscall.Errno(-e.Status)) {
		t.Errorf("Err() = %v, want the cause %v", err, cause)
	}

	plain := errors.New("rdmacm: no errno here")
	e = &Event{Type: EventAddrResolved}
	e.fail(EventAddrError, plain)
	if e.Status != -int(syscall.EIO) || e.Err() != plain {
		t.Errorf("event %v, Err %v: want status -EIO and the cause", e, e.Err())
	}
}

// TestRejectedErr: a rejection reads with one package prefix and matches
// ErrRejected and ECONNREFUSED.
func TestRejectedErr(t *testing.T) {
	err := (&Event{Type: EventRejected, Status: 28}).Err()
	if got, want := err.Error(), "rdmacm: connection rejected (reason 28)"; got != want {
		t.Errorf("Err() reads %q, want %q", got, want)
	}
	if !errors.Is(err, ErrRejected) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Err() = %v, want ErrRejected and ECONNREFUSED", err)
	}
}

package rpma_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/purerdma/purerdma/rpma"
	"github.com/purerdma/purerdma/uverbs"
)

// TestCodeText checks every code against rpma_err_2str (librpma 1.3
// src/rpma_err.c), and that each code's sentinel gives it back through
// Code.
func TestCodeText(t *testing.T) {
	tests := []struct {
		code int
		err  error // the sentinel of the code; nil for none
		want string
	}{
		{0, nil, "Success"},
		{-100000, rpma.ErrUnknown, "Unknown error"},
		{-100001, rpma.ErrUnsupported, "Not supported"},
		{-100002, rpma.ErrProvider, "Provider error occurred"},
		{-100003, rpma.ErrNoMem, "Out of memory"},
		{-100004, rpma.ErrInvalid, "Invalid argument"},
		{-100005, rpma.ErrNoCompletion, "No next completion available"},
		{-100006, rpma.ErrNoEvent, "No next event available"},
		{-100007, rpma.ErrAgain, "Temporary error, try again"},
		{-100008, rpma.ErrSharedChannel, "Completion channel is shared"},
		{-100009, rpma.ErrNotSharedChannel, "Completion channel is not shared"},
		{-100010, nil, "Unknown error"},
		{-99999, nil, "Unknown error"},
		{-1, nil, "Unknown error"},
		{1, nil, "Unknown error"},
	}
	for _, tt := range tests {
		if got := rpma.CodeText(tt.code); got != tt.want {
			t.Errorf("CodeText(%d) = %q, want %q", tt.code, got, tt.want)
		}
		if tt.err == nil {
			continue
		}
		if got := rpma.Code(tt.err); got != tt.code {
			t.Errorf("Code(%v) = %d, want RPMA_E_* value %d", tt.err, got, tt.code)
		}
		if got := rpma.Code(fmt.Errorf("wrapped: %w", tt.err)); got != tt.code {
			t.Errorf("Code(wrapped %v) = %d, want %d", tt.err, got, tt.code)
		}
	}
}

// TestCodeConstants checks the Code constants against librpma's
// RPMA_E_* values.
func TestCodeConstants(t *testing.T) {
	for _, tt := range []struct {
		name      string
		got, want int
	}{
		{"CodeUnknown", rpma.CodeUnknown, -100000},
		{"CodeNoSupp", rpma.CodeNoSupp, -100001},
		{"CodeProvider", rpma.CodeProvider, -100002},
		{"CodeNoMem", rpma.CodeNoMem, -100003},
		{"CodeInval", rpma.CodeInval, -100004},
		{"CodeNoCompletion", rpma.CodeNoCompletion, -100005},
		{"CodeNoEvent", rpma.CodeNoEvent, -100006},
		{"CodeAgain", rpma.CodeAgain, -100007},
		{"CodeSharedChannel", rpma.CodeSharedChannel, -100008},
		{"CodeNotSharedChannel", rpma.CodeNotSharedChannel, -100009},
	} {
		if tt.got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

// TestCode checks Code on the errors that are not a bare sentinel: nil,
// ErrClosed (librpma's NULL pointer after a delete), errors of no
// librpma kind, and the shared sentinels' errnos.
func TestCode(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"ErrClosed", rpma.ErrClosed, rpma.CodeInval},
		{"uverbs.ErrClosed wrapped", fmt.Errorf("x: %w", uverbs.ErrClosed), rpma.CodeInval},
		{"uverbs.ErrInvalid", uverbs.ErrInvalid, rpma.CodeInval},
		{"uverbs.ErrUnsupported", uverbs.ErrUnsupported, rpma.CodeNoSupp},
		{"context.Canceled", context.Canceled, rpma.CodeUnknown},
		{"a bare errno", syscall.EINVAL, rpma.CodeUnknown},
		{"an unrelated error", errors.New("x"), rpma.CodeUnknown},
	} {
		if got := rpma.Code(tt.err); got != tt.want {
			t.Errorf("Code(%s) = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestSharedSentinels checks that the kinds the module shares are the
// same values in rpma, and the errnos the sentinels match.
func TestSharedSentinels(t *testing.T) {
	if rpma.ErrInvalid != uverbs.ErrInvalid || rpma.ErrClosed != uverbs.ErrClosed || rpma.ErrUnsupported != uverbs.ErrUnsupported {
		t.Error("rpma.ErrInvalid, ErrClosed, ErrUnsupported are not uverbs'")
	}
	for _, tt := range []struct {
		err    error
		target error
		want   bool
	}{
		{rpma.ErrInvalid, syscall.EINVAL, true},
		{rpma.ErrClosed, syscall.EBADF, true},
		{rpma.ErrUnsupported, syscall.EOPNOTSUPP, true},
		{rpma.ErrNoMem, syscall.ENOMEM, true},
		{rpma.ErrAgain, syscall.EAGAIN, true},
		{rpma.ErrNoCompletion, syscall.EAGAIN, false},
		{rpma.ErrNoEvent, syscall.EAGAIN, false},
		{rpma.ErrProvider, syscall.EINVAL, false},
		{rpma.ErrUnknown, syscall.EINVAL, false},
		{rpma.ErrNoCompletion, rpma.ErrNoEvent, false},
		{rpma.ErrInvalid, rpma.ErrClosed, false},
	} {
		if got := errors.Is(tt.err, tt.target); got != tt.want {
			t.Errorf("errors.Is(%v, %v) = %v, want %v", tt.err, tt.target, got, tt.want)
		}
	}
}

// TestConnEventString checks every event against
// rpma_utils_conn_event_2str (librpma 1.3 src/utils.c).
func TestConnEventString(t *testing.T) {
	tests := []struct {
		ev    rpma.ConnEvent
		value int
		want  string
	}{
		{rpma.ConnUndefined, -1, "Undefined connection event"},
		{rpma.ConnEstablished, 0, "Connection established"},
		{rpma.ConnClosed, 1, "Connection closed"},
		{rpma.ConnLost, 2, "Connection lost"},
		{rpma.ConnRejected, 3, "Connection rejected"},
		{rpma.ConnUnreachable, 4, "Connection unreachable"},
		{rpma.ConnEvent(5), 5, "Unsupported connection event"},
		{rpma.ConnEvent(-2), -2, "Unsupported connection event"},
	}
	for _, tt := range tests {
		if int(tt.ev) != tt.value {
			t.Errorf("event %q = %d, want enum value %d", tt.want, int(tt.ev), tt.value)
		}
		if got := tt.ev.String(); got != tt.want {
			t.Errorf("ConnEvent(%d).String() = %q, want %q", int(tt.ev), got, tt.want)
		}
		if got := fmt.Sprint(tt.ev); got != tt.want {
			t.Errorf("fmt.Sprint(ConnEvent(%d)) = %q, want %q", int(tt.ev), got, tt.want)
		}
	}
}

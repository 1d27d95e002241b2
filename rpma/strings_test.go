package rpma_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/purerdma/purerdma/rpma"
)

// TestErrString checks every code against rpma_err_2str (librpma 1.3
// src/rpma_err.c).
func TestErrString(t *testing.T) {
	tests := []struct {
		code int
		err  rpma.Error
		want string
	}{
		{0, 0, "Success"},
		{-100000, rpma.ErrUnknown, "Unknown error"},
		{-100001, rpma.ErrNoSupp, "Not supported"},
		{-100002, rpma.ErrProvider, "Provider error occurred"},
		{-100003, rpma.ErrNoMem, "Out of memory"},
		{-100004, rpma.ErrInval, "Invalid argument"},
		{-100005, rpma.ErrNoCompletion, "No next completion available"},
		{-100006, rpma.ErrNoEvent, "No next event available"},
		{-100007, rpma.ErrAgain, "Temporary error, try again"},
		{-100008, rpma.ErrSharedChannel, "Completion channel is shared"},
		{-100009, rpma.ErrNotSharedChannel, "Completion channel is not shared"},
		{-100010, rpma.Error(-100010), "Unknown error"},
		{-99999, rpma.Error(-99999), "Unknown error"},
		{-1, rpma.Error(-1), "Unknown error"},
		{1, rpma.Error(1), "Unknown error"},
	}
	for _, tt := range tests {
		if int(tt.err) != tt.code {
			t.Errorf("%v = %d, want RPMA_E_* value %d", tt.err, int(tt.err), tt.code)
		}
		if got := rpma.ErrString(tt.code); got != tt.want {
			t.Errorf("ErrString(%d) = %q, want %q", tt.code, got, tt.want)
		}
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error(%d).Error() = %q, want %q", tt.code, got, tt.want)
		}
	}
}

// TestErrorSentinels checks that wrapped codes still match with
// errors.Is and errors.As.
func TestErrorSentinels(t *testing.T) {
	err := fmt.Errorf("rpma: something: %w", rpma.ErrInval)
	if !errors.Is(err, rpma.ErrInval) || errors.Is(err, rpma.ErrNoSupp) {
		t.Errorf("errors.Is on %v", err)
	}
	var e rpma.Error
	if !errors.As(err, &e) || e != rpma.ErrInval {
		t.Errorf("errors.As(%v) = %v", err, e)
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

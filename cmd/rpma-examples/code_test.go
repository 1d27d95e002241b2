package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/purerdma/purerdma/rpma"
)

// TestCode checks the examples' return values: the RPMA_E_* code a C
// example returns for an rpma error, -1 for an error of no librpma kind.
func TestCode(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, 0},
		{"no completion", rpma.ErrNoCompletion, -100005},
		{"a bad port (resolveAddr)", fmt.Errorf("port %q: %w", "x", rpma.ErrInvalid), -100004},
		{"a closed object", fmt.Errorf("x: %w", rpma.ErrClosed), -100004},
		{"unsupported", rpma.ErrUnsupported, -100001},
		{"unknown", rpma.ErrUnknown, -100000},
		{"a cancelled wait", context.Canceled, -1},
		{"another error", errors.New("x"), -1},
	} {
		if got := code(tt.err); got != tt.want {
			t.Errorf("code(%s) = %d, want %d", tt.name, got, tt.want)
		}
	}
	if _, err := resolveAddr("127.0.0.1", "port"); code(err) != rpma.CodeInval {
		t.Errorf("resolveAddr with a bad port: %v (code %d), want RPMA_E_INVAL", err, code(err))
	}
}

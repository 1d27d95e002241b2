package rpma

import (
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/purerdma/purerdma/mr"
)

// TestAdvise checks rpma_mr_advise's argument checks. The region is a
// zero mr.MR, registered with no device: a call that passes the checks
// reaches it and finds it closed (the VM tests ask devices).
func TestAdvise(t *testing.T) {
	saveLog(t)
	SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	m := &MR{region: &mr.MR{}, usage: UsageReadDst} // a region of 0 bytes
	tests := []struct {
		name    string
		m       *MR
		off, n  int
		advice  Advice
		flags   AdviseFlags
		wantErr error
	}{
		{"nil region", nil, 0, 0, AdvicePrefetch, 0, ErrInvalid},
		{"prefetch", m, 0, 0, AdvicePrefetch, 0, ErrClosed},
		{"prefetch write, flush", m, 0, 0, AdvicePrefetchWrite, AdviseFlush, ErrClosed},
		{"prefetch no fault", m, 0, 0, AdvicePrefetchNoFault, 0, ErrClosed},
		{"unknown advice", m, 0, 0, Advice(7), 0, ErrClosed},
		{"unknown flag", m, 0, 0, AdvicePrefetch, 2, ErrInvalid},
		{"past the end", m, 0, 1, AdvicePrefetch, 0, ErrInvalid},
		{"negative offset", m, -1, 0, AdvicePrefetch, 0, ErrInvalid},
		{"negative length", m, 0, -1, AdvicePrefetch, 0, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.m.Advise(tt.off, tt.n, tt.advice, tt.flags)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Advise(%d, %d, %d, %#x) = %v, want %v", tt.off, tt.n, tt.advice, tt.flags, err, tt.wantErr)
			}
		})
	}
}

package uverbs

import (
	"context"
	"errors"
	"testing"
	"time"
)

// busySQ is a send queue the device finishes with after a number of looks.
type busySQ struct {
	countSQ
	looks, busyFor int
}

func (s *busySQ) Idle() bool { s.looks++; return s.looks > s.busyFor }

func TestDrainSend(t *testing.T) {
	for _, tc := range []struct {
		name    string
		busyFor int
		timeout time.Duration
		closed  bool
		want    error
	}{
		{"idle at once", 0, time.Second, false, nil},
		{"idle after five looks", 5, time.Second, false, nil},
		{"never idle", 1 << 30, 20 * time.Millisecond, false, context.DeadlineExceeded},
		{"closed", 0, time.Second, true, ErrClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			qp, _ := benchQP()
			sq := &busySQ{busyFor: tc.busyFor}
			qp.setSQ(sq)
			qp.closed.Store(tc.closed)
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			err := qp.DrainSend(ctx)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("DrainSend = %v, want %v", err, tc.want)
			}
			if tc.want == nil && sq.looks != tc.busyFor+1 {
				t.Errorf("looked %d times, want %d", sq.looks, tc.busyFor+1)
			}
		})
	}
	var nilQP *QP
	if err := nilQP.DrainSend(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("nil QP: %v, want ErrClosed", err)
	}
}

package uverbs

import (
	"context"
	"fmt"
	"time"
)

// DrainSend waits until the device is done with every send request posted
// on the QP so far, signaled or not, or until ctx ends. A request still in
// the send queue when the QP moves to ERR (a disconnect does that) is
// flushed, not sent. Since Linux 6.12, rxe's doorbell only queues the
// requester on a workqueue, so a send posted just before a disconnect is
// usually still there; on 6.1 it ran inside the doorbell's system call.
// rxe counts a request done once it is acknowledged, siw once it has taken
// it into its transmit path.
//
// DrainSend polls the queue's indices (no system call), backing off from
// 20 µs to 1 ms between looks. It returns ctx's error if ctx ends first.
func (qp *QP) DrainSend(ctx context.Context) error {
	if qp == nil {
		return ErrClosed
	}
	for wait := 20 * time.Microsecond; ; wait = min(2*wait, time.Millisecond) {
		idle, err := qp.sendIdle()
		if idle || err != nil {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("uverbs: drain send queue: %w", ctx.Err())
		case <-t.C:
		}
	}
}

func (qp *QP) sendIdle() (bool, error) {
	qp.sendMu.Lock()
	defer qp.sendMu.Unlock()
	if qp.closed.Load() {
		return false, ErrClosed
	}
	return qp.sq.Idle(), nil
}

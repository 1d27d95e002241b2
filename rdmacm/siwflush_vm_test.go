package rdmacm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/internal/verbstest"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// TestDisconnectCompletesReads: RDMA reads still waiting for their
// responses when a connection is disconnected must each complete, read
// or flushed. On siw (6.1 and 6.12) librdmacm's rdma_disconnect, which
// moves an iWARP QP to SQD, leaves them without a completion when siw's
// transmitter is idle: the move from RTS to SQD then drops the connection
// without flushing the ORQ, where a read waits for its response, or the
// requests queued behind a full ORQ (siw_qp.c,
// siw_qp_nextstate_from_rts). Disconnect moves a siw QP to ERR instead,
// which flushes them. The reads are large, so that they are still in
// flight at the disconnect, and no more than the ORQ holds, so that the
// transmitter is idle.
func TestDisconnectCompletesReads(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		const (
			reads = 4
			size  = 256 << 10
			depth = reads // the ORQ holds them all
		)
		qc := uverbs.QPCap{MaxSendWR: reads, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}
		a, b := connected(t, d, qc, depth)
		access := uverbs.LocalWrite | uverbs.RemoteWrite | uverbs.RemoteRead
		_, amr := verbstest.Memory(t, a.PD(), reads*size, access)
		_, bmr := verbstest.Memory(t, b.PD(), size, access)
		from := rdmacm.Remote{Addr: bmr.Addr(), RKey: bmr.RKey()}
		for i := range reads {
			if err := a.PostRead(uint64(i+1), amr, i*size, size, uverbs.SendSignaled, from); err != nil {
				t.Fatalf("read %d: %v", i+1, err)
			}
		}
		if err := a.Disconnect(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		status := map[cq.Status]int{}
		done := map[uint64]bool{}
		for len(done) < reads {
			wc, err := a.GetSendComp(ctx)
			if err != nil && (!errors.Is(err, rdmacm.ErrDisconnected) || ctx.Err() != nil) {
				t.Fatalf("after Disconnect, %d of %d reads completed (%v): %v", len(done), reads, status, err)
			}
			if err != nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			// siw may flush a read twice (docs/faults.md).
			if wc.ID < 1 || wc.ID > reads || (wc.Status != cq.Success && wc.Status != cq.WRFlushErr) {
				t.Errorf("completion %+v, want a read done or flushed", wc)
			}
			status[wc.Status]++
			done[wc.ID] = true
		}
		t.Logf("%d reads posted just before the disconnect: %v", reads, status)
	})
}

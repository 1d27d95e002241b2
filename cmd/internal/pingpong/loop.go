package pingpong

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/purerdma/purerdma/cq"
)

// Work request IDs; a QP's pending mask is made of them.
const (
	RecvWRID = 1
	SendWRID = 2
)

// Loop is the C tools' post/poll loop over one CQ: every QP keeps a send
// and a receive in flight, and each completion counts and, once both of
// a QP's are done, posts its next send. The tools differ only in how many
// QPs share the CQ and the receives, and in the hooks.
type Loop struct {
	Ch      *cq.Channel // nil: busy-poll
	CQ      *cq.CQ
	NumQP   int
	Iters   int
	RxDepth int
	Batch   int // completions one poll takes (C's wc array)

	// PostRecv posts n receives and returns how many it posted.
	PostRecv func(n int) int
	// PostSend posts one send on QP qp.
	PostSend func(qp int) error
	// QP, when not nil, returns the index of the QP a completion is for;
	// without it there is one QP.
	QP func(wc *cq.WC) (int, error)
	// OnRecv, when not nil, sees each received completion.
	OnRecv func(wc *cq.WC) error

	routs      int   // receives posted and not completed
	pending    []int // per QP, the WR IDs not completed
	scnt, rcnt int
}

// Prime posts RxDepth receives and, with a channel, asks for the first
// CQ event: what the C tools do before the address exchange.
func (l *Loop) Prime() error {
	if l.routs = l.PostRecv(l.RxDepth); l.routs < l.RxDepth {
		return fmt.Errorf("Couldn't post receive (%d)", l.routs)
	}
	if l.Ch != nil {
		if err := l.CQ.ReqNotify(false); err != nil {
			return fmt.Errorf("Couldn't request CQ notification (%v)", err)
		}
	}
	return nil
}

// Start posts the first send on each QP from the client; the server's
// QPs wait for a receive first.
func (l *Loop) Start(client bool) error {
	l.pending = make([]int, l.NumQP)
	for i := range l.pending {
		l.pending[i] = RecvWRID
		if client {
			if err := l.PostSend(i); err != nil {
				return fmt.Errorf("Couldn't post send (%v)", err)
			}
			l.pending[i] |= SendWRID
		}
	}
	return nil
}

// Run polls until Iters sends and receives completed and returns the time
// it took.
func (l *Loop) Run(ctx context.Context) (time.Duration, error) {
	wc := make([]cq.WC, l.Batch)
	spins := 0
	start := time.Now()
	for l.rcnt < l.Iters || l.scnt < l.Iters {
		if l.Ch != nil {
			c, err := l.Ch.Wait(ctx)
			if err != nil {
				return 0, fmt.Errorf("Failed to get cq_event (%v)", err)
			}
			if c != l.CQ {
				return 0, fmt.Errorf("CQ event for unknown CQ %p", c)
			}
			if err := l.CQ.ReqNotify(false); err != nil {
				return 0, fmt.Errorf("Couldn't request CQ notification (%v)", err)
			}
		}
		var ne int
		for {
			n, err := l.CQ.Poll(wc)
			if err != nil {
				return 0, fmt.Errorf("poll CQ failed (%v)", err)
			}
			ne = n
			if l.Ch != nil || ne > 0 {
				break
			}
			// Busy-poll as C does, but let other goroutines run and
			// notice the context ending.
			runtime.Gosched()
			if spins++; spins%4096 == 0 && ctx.Err() != nil {
				return 0, fmt.Errorf("poll CQ failed (%v)", ctx.Err())
			}
		}
		for i := 0; i < ne; i++ {
			if err := l.parseWC(&wc[i]); err != nil {
				return 0, fmt.Errorf("%v\nparse WC failed %d", err, ne)
			}
		}
	}
	return time.Since(start), nil
}

// parseWC is parse_single_wc (ibv_srq_pingpong and ibv_ud_pingpong have
// it inline, with the same messages).
func (l *Loop) parseWC(wc *cq.WC) error {
	if wc.Status != cq.Success {
		return fmt.Errorf("Failed status %s (%d) for wr_id %d", wc.Status, wc.Status, int(wc.ID))
	}
	qi := 0
	if l.QP != nil {
		var err error
		if qi, err = l.QP(wc); err != nil {
			return err
		}
	}
	switch wc.ID {
	case SendWRID:
		l.scnt++
	case RecvWRID:
		// Refill once only one receive per QP is left.
		if l.routs--; l.routs <= l.NumQP {
			l.routs += l.PostRecv(l.RxDepth - l.routs)
			if l.routs < l.RxDepth {
				return fmt.Errorf("Couldn't post receive (%d)", l.routs)
			}
		}
		if l.OnRecv != nil {
			if err := l.OnRecv(wc); err != nil {
				return err
			}
		}
		l.rcnt++
	default:
		return fmt.Errorf("Completion for unknown wr_id %d", int(wc.ID))
	}
	l.pending[qi] &^= int(wc.ID)
	if l.scnt < l.Iters && l.pending[qi] == 0 {
		if err := l.PostSend(qi); err != nil {
			return fmt.Errorf("Couldn't post send (%v)", err)
		}
		l.pending[qi] = RecvWRID | SendWRID
	}
	return nil
}

// PrintStats prints the two lines all three tools end with. The time is
// in whole microseconds held in a float, as C's.
func PrintStats(w io.Writer, elapsed time.Duration, size, iters int) {
	usec := float32(elapsed.Microseconds())
	bytes := int64(size) * int64(iters) * 2
	fmt.Fprintf(w, "%d bytes in %.2f seconds = %.2f Mbit/sec\n",
		bytes, float64(usec)/1000000., float64(bytes)*8./float64(usec))
	fmt.Fprintf(w, "%d iters in %.2f seconds = %.2f usec/iter\n",
		iters, float64(usec)/1000000., float64(usec)/float64(iters))
}

// PrintLocal prints a local address line as ibv_rc_pingpong and
// ibv_srq_pingpong do.
func PrintLocal(w io.Writer, d Dest) {
	fmt.Fprintf(w, "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n",
		d.LID, d.QPN, d.PSN, FormatGID(d.GID))
}

// PrintRemote prints a remote address line as all three tools do.
func PrintRemote(w io.Writer, d Dest) {
	fmt.Fprintf(w, "  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n",
		d.LID, d.QPN, d.PSN, FormatGID(d.GID))
}

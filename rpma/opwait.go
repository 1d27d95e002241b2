package rpma

import (
	"context"
	"errors"

	"github.com/purerdma/purerdma/cq"
)

// Span is a range of a local region: Len bytes at Off of MR. The
// operation-and-wait methods take Spans and RemoteSpans rather than
// positional offsets and lengths, so that a source and a destination
// cannot be swapped unnoticed.
type Span struct {
	MR       *MR
	Off, Len int
}

// Span returns the range of n bytes at off of m.
func (m *MR) Span(off, n int) Span { return Span{MR: m, Off: off, Len: n} }

// RemoteSpan is a place in a peer's region: Off bytes into MR. The
// length comes from the local Span of the operation.
type RemoteSpan struct {
	MR  *RemoteMR
	Off int
}

// At returns the place off bytes into r.
func (r *RemoteMR) At(off int) RemoteSpan { return RemoteSpan{MR: r, Off: off} }

// connSource is a connection's completions: its CQ, and its receive CQ
// when it has one on the same completion channel. It keeps the CQs, which
// the connection's Close drops from the request while the router may
// still poll: a closed CQ answers ErrClosed.
type connSource struct {
	c      *Conn
	q, rcq *CQ
	shared bool
}

func (s connSource) poll(wc []cq.WC) (int, error) {
	n, err := s.q.GetWC(wc)
	if err != nil && !noCompletion(err) {
		return 0, err
	}
	if s.rcq != nil && n < len(wc) {
		m, err := s.rcq.GetWC(wc[n:])
		if err != nil && !noCompletion(err) {
			return 0, err
		}
		n += m
	}
	return n, nil
}

func (s connSource) wait(ctx context.Context) error {
	if s.shared {
		_, _, err := s.c.Wait(ctx)
		return err
	}
	return s.q.Wait(ctx)
}

// router returns the connection's completion router, made on first use.
// A connection whose receives complete on a CQ with a completion channel
// of its own (ConnConfig.RCQSize without SharedCompChannel, or an SRQ
// with its own receive CQ) has two channels to sleep on, which one
// goroutine cannot; it is ErrInvalid.
func (c *Conn) router() (*router, error) {
	if err := c.usable("wait"); err != nil {
		return nil, err
	}
	c.rtOnce.Do(func() {
		// Under mu: Close drops the CQs from the request under it.
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed.Load() {
			c.rtErr = closedErr("wait", nil)
			return
		}
		cfg := c.req.cfg
		if c.req.rcq != nil && c.req.shared == nil || cfg.SRQ != nil && cfg.SRQ.rcq != nil {
			c.rtErr = inval("operation and wait on a connection whose receive CQ has a channel of its own: use SharedCompChannel")
			return
		}
		c.rt = newRouter(connSource{c: c, q: c.req.cq, rcq: c.req.rcq, shared: c.req.shared != nil}, cfg.SQSize, cfg.RQSize)
	})
	return c.rt, c.rtErr
}

// Do posts one operation and waits for its own completion, which it
// returns, with the completion's error (a *cq.CompletionError) when its
// status is not success. post must post exactly one operation on c with
// the Op it is given, unchanged: its Context is the ID Do waits for. Any
// number of goroutines may call Do (and the other ...AndWait methods and
// a Messenger's) on one connection at once: whichever of them polls the
// CQ hands each completion to the goroutine that waits for it, and
// nothing allocates in the steady state. At most ConnConfig.SQSize
// operations are in flight; more wait for a free place.
//
// Do owns the connection's completions: do not poll its CQs with GetWC
// or wait on them while it is in use. Completions of operations not
// posted through it are dropped. When ctx ends, Do returns ctx's error
// and the operation's completion is dropped when it comes: the operation
// may still run, so its memory must stay registered and unused until
// then, or until the connection closes. When waiting
// on the CQ fails (the connection closed, or broke), every waiting
// goroutine gets that error, and so do later calls.
func (c *Conn) Do(ctx context.Context, post func(Op) error) (cq.WC, error) {
	rt, err := c.router()
	if err != nil {
		return cq.WC{}, err
	}
	i, id, err := rt.acquire(ctx)
	if err != nil {
		return cq.WC{}, err
	}
	if err := post(Op{Flags: CompletionAlways, Context: id}); err != nil {
		rt.release(i)
		return cq.WC{}, err
	}
	wc, err := rt.wait(ctx, i)
	if err == nil {
		err = wc.Err()
	}
	return wc, err
}

// ReadAndWait reads dst.Len bytes of the peer's memory at src into dst
// and waits for the read to complete (rpma_read with a wait, as Do).
func (c *Conn) ReadAndWait(ctx context.Context, dst Span, src RemoteSpan) error {
	_, err := c.Do(ctx, func(op Op) error {
		return c.Read(dst.MR, dst.Off, src.MR, src.Off, dst.Len, op)
	})
	return err
}

// WriteAndWait writes src to the peer's memory at dst and waits for the
// write to complete (rpma_write with a wait, as Do). The completion
// says the data left; to know the peer's memory holds it, flush with
// FlushAndWait.
func (c *Conn) WriteAndWait(ctx context.Context, dst RemoteSpan, src Span) error {
	_, err := c.Do(ctx, func(op Op) error {
		return c.Write(dst.MR, dst.Off, src.MR, src.Off, src.Len, op)
	})
	return err
}

// FlushAndWait flushes n bytes of the peer's memory at dst (Flush) and
// waits for the flush to complete.
func (c *Conn) FlushAndWait(ctx context.Context, dst RemoteSpan, n int, typ FlushType) error {
	_, err := c.Do(ctx, func(op Op) error {
		return c.Flush(dst.MR, dst.Off, n, typ, op)
	})
	return err
}

// noCompletion reports whether err is GetWC's ErrNoCompletion. GetWC
// returns the sentinel itself, so a compare answers before errors.Is,
// which on every empty poll of a busy-wait was a tenth of its time
// (docs/profile.md, Linux 6.12).
func noCompletion(err error) bool { return err == ErrNoCompletion || errors.Is(err, ErrNoCompletion) }

package rpma

import (
	"context"
	"errors"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/uverbs"
)

// CQ is a connection's completion queue or receive CQ (rpma_cq).
type CQ struct {
	q      *cq.CQ
	ch     *cq.Channel
	shared bool // the channel belongs to the connection, shared with its other CQ
	owned  bool // ch is this CQ's own
}

// newCQ creates a CQ of size entries on ch (a new channel of its own when
// ch is nil) and arms it, as librpma does.
func newCQ(ctx *uverbs.Context, size int, ch *cq.Channel) (*CQ, error) {
	c := &CQ{ch: ch, shared: ch != nil}
	if ch == nil {
		var err error
		if c.ch, err = cq.NewChannel(ctx); err != nil {
			return nil, provider("create completion channel", err)
		}
		c.owned = true
	}
	q, err := cq.New(ctx, max(size, 1), &cq.Options{Channel: c.ch})
	if err == nil {
		err = q.ReqNotify(false)
	}
	if err != nil {
		if q != nil {
			q.Close()
		}
		if c.owned {
			c.ch.Close()
		}
		return nil, provider("create CQ", err)
	}
	c.q = q
	return c, nil
}

func (c *CQ) close() error {
	if c == nil {
		return nil
	}
	err := c.q.Close()
	if c.owned {
		err = errors.Join(err, c.ch.Close())
	}
	return err
}

// GetWC moves up to n completions into wc and their number into *got
// (rpma_cq_get_wc). got may be nil only when n is 1. It returns
// ErrNoCompletion when there is none, and ErrInval when n < 1, wc holds
// fewer than n entries, or n > 1 with a nil got. For a failed completion
// only ID, Status, QPNum and VendorErr are valid.
func (c *CQ) GetWC(n int, wc []cq.WC, got *int) error {
	switch {
	case c == nil:
		return inval("nil CQ")
	case n < 1:
		return inval("get %d completions", n)
	case len(wc) < n:
		return inval("get %d completions into %d entries", n, len(wc))
	case n > 1 && got == nil:
		return inval("get %d completions without a count", n)
	}
	m, err := c.q.Poll(wc[:n])
	if err != nil {
		return provider("poll", err)
	}
	if m == 0 {
		return ErrNoCompletion
	}
	if got != nil {
		*got = m
	}
	return nil
}

// Wait waits until the CQ has a completion or ctx ends, then re-arms it
// (rpma_cq_wait); get the completions with GetWC. A wake-up may find no
// completion. With a shared completion channel it returns
// ErrSharedChannel: wait with Conn.Wait.
func (c *CQ) Wait(ctx context.Context) error {
	if c == nil {
		return ErrInval
	}
	if c.shared {
		return ErrSharedChannel
	}
	if _, err := c.ch.Wait(ctx); err != nil {
		if ctx.Err() != nil {
			return err
		}
		if errors.Is(err, unix.EBADF) {
			return closedErr("wait", err)
		}
		return ErrNoCompletion
	}
	return provider("arm CQ", c.q.ReqNotify(false))
}

// Fd returns the file descriptor of the CQ's completion channel
// (rpma_cq_get_fd).
func (c *CQ) Fd() int {
	if c == nil {
		return -1
	}
	return c.ch.Fd()
}

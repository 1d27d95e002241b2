package rpma

import (
	"context"
	"errors"
	"sync/atomic"
	"syscall"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// CQ is a connection's completion queue or receive CQ (rpma_cq).
type CQ struct {
	q      *cq.CQ
	ch     *cq.Channel
	shared bool // the channel belongs to the connection, shared with its other CQ
	owned  bool // ch is this CQ's own
	// closed is set when the connection or SRQ that owns the CQ closes
	// it, so that its methods answer ErrClosed before they look at their
	// arguments.
	closed atomic.Bool
	// id is the connection's ID, whose end Wait watches; nil for an SRQ's
	// receive CQ, which serves several connections.
	id *rdmacm.ID
}

// newCQ creates a CQ of size entries on ch (a new channel of its own when
// ch is nil) and arms it, as librpma does.
func newCQ(dev *uverbs.Context, size int, ch *cq.Channel) (*CQ, error) {
	c := &CQ{ch: ch, shared: ch != nil}
	if ch == nil {
		var err error
		if c.ch, err = cq.NewChannel(dev); err != nil {
			return nil, provider("create completion channel", err)
		}
		c.owned = true
	}
	q, err := cq.New(dev, max(size, 1), &cq.Options{Channel: c.ch})
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
	c.closed.Store(true)
	err := c.q.Close()
	if c.owned {
		err = errors.Join(err, c.ch.Close())
	}
	return err
}

// usable returns the error of a method on a nil or closed CQ.
func (c *CQ) usable(what string) error {
	if c == nil {
		return errNil
	}
	if c.closed.Load() {
		return closedErr(what, nil)
	}
	return nil
}

// GetWC moves up to len(wc) completions, oldest first, into wc and
// returns how many it moved (rpma_cq_get_wc, with num_entries len(wc)).
// It returns 0 and ErrNoCompletion (RPMA_E_NO_COMPLETION) when the CQ
// holds no completion, which is no failure: wait with Wait (or Conn.Wait
// on a shared channel) and call it again. It returns ErrInvalid for an
// empty wc (librpma's num_entries < 1 or NULL wc). For a failed
// completion only ID, Status, QPNum and VendorErr are valid. It neither
// blocks nor allocates.
func (c *CQ) GetWC(wc []cq.WC) (int, error) {
	if err := c.usable("get completions"); err != nil {
		return 0, err
	}
	if len(wc) == 0 {
		return 0, errNoWC
	}
	n, err := c.q.Poll(wc)
	if err != nil {
		return 0, provider("poll", err)
	}
	if n == 0 {
		return 0, ErrNoCompletion
	}
	return n, nil
}

// errNoWC is GetWC's ErrInvalid, made once: GetWC is on the data path.
var errNoWC = inval("get completions into no entries")

// Wait waits until the CQ has a completion or ctx ends, then re-arms it
// (rpma_cq_wait); get the completions with GetWC. A wake-up may find no
// completion. With a shared completion channel it returns
// ErrSharedChannel: wait with Conn.Wait. When ctx ends it returns ctx's
// error, and ErrClosed when the CQ is closed. Any other failure of the
// wait on the completion channel is ErrNoCompletion
// (RPMA_E_NO_COMPLETION, as librpma returns when ibv_get_cq_event
// fails): the CQ stays usable; poll it with GetWC and wait again.
//
// A connection's CQ also watches the connection: once the peer has
// disconnected or died (the kernel disconnects a dead process's
// connections), or the connection was disconnected here, Wait returns at
// once an error of kind ErrNoCompletion (Code: CodeNoCompletion) that also
// matches rdmacm.ErrDisconnected and syscall.ECONNRESET. librpma's wait
// would sleep on. The completions the CQ holds, flushed ones among them,
// are still there: drain them with GetWC until ErrNoCompletion. The
// disconnection stays for Conn.NextEvent (ConnClosed). The receive CQ of
// an SRQ serves several connections and watches none.
func (c *CQ) Wait(ctx context.Context) error {
	if err := c.usable("wait"); err != nil {
		return err
	}
	if c.shared {
		return ErrSharedChannel
	}
	if _, err := waitChannel(ctx, c.id, c.ch); err != nil {
		return waitErr(ctx, err)
	}
	return provider("arm CQ", c.q.ReqNotify(false))
}

// waitChannel waits for ch's next completion event, and for the end of
// id's connection when id is not nil (rdmacm.ID.WaitCQ).
func waitChannel(ctx context.Context, id *rdmacm.ID, ch *cq.Channel) (*cq.CQ, error) {
	if id == nil {
		return ch.Wait(ctx)
	}
	return id.WaitCQ(ctx, ch)
}

// errConnEnded is the error of a wait on a connection that ended, made
// once. Its kind is ErrNoCompletion, the code librpma's waits return when
// ibv_get_cq_event fails: none came and none will.
var errConnEnded error = &rpmaError{"rpma: wait: " + ErrNoCompletion.Error() + ": " + rdmacm.ErrDisconnected.Error(), ErrNoCompletion, rdmacm.ErrDisconnected}

// waitErr is the error of CQ.Wait and Conn.Wait for err from the wait.
func waitErr(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return err
	case errors.Is(err, rdmacm.ErrDisconnected):
		return errConnEnded
	case errors.Is(err, syscall.EBADF):
		return closedErr("wait", err)
	}
	return ErrNoCompletion
}

// Fd returns the file descriptor of the CQ's completion channel
// (rpma_cq_get_fd).
func (c *CQ) Fd() int {
	if c == nil {
		return -1
	}
	return c.ch.Fd()
}

package rpma

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rdmacm"
)

// Messenger sends and receives messages of up to a fixed size on a
// connection, over send and receive, and keeps its receives posted: a
// received message's buffer goes back to the receive queue when the
// caller releases it. Its buffers are one registered region (from
// Peer.AllocMR): depth receive buffers and one send buffer per place in
// the send queue. Send and Recv may be called from any number of
// goroutines, together with Do on the same connection, whose completion
// router they share; neither allocates in the steady state.
type Messenger struct {
	c      *Conn
	rt     *router
	mem    *MR
	size   int
	depth  int
	out    []atomic.Bool // receive buffer i is the caller's, until Release
	closed atomic.Bool
}

// Message is a received message: its bytes stay valid until Release,
// which gives the buffer back to the receive queue.
type Message struct {
	m *Messenger
	i int32
	n int
}

// NewMessenger makes the Messenger of c for messages of up to size
// bytes, with depth receives posted (at most ConnConfig.RQSize). A
// connection has at most one; its receives may not come from an SRQ.
// The other side must have a receive posted for each message sent to it
// (its own Messenger's depth): a send waits, retrying, until it has.
func NewMessenger(c *Conn, size, depth int) (*Messenger, error) {
	rt, err := c.router()
	if err != nil {
		return nil, err
	}
	cfg := c.req.cfg
	switch {
	case cfg.SRQ != nil:
		return nil, inval("messages on a connection that receives through an SRQ")
	case size <= 0 || depth <= 0 || depth > cfg.RQSize:
		return nil, inval("messenger of %d buffers of %d bytes on a receive queue of %d", depth, size, cfg.RQSize)
	case !c.messenger.CompareAndSwap(false, true):
		return nil, inval("the connection has a messenger")
	}
	m := &Messenger{c: c, rt: rt, size: size, depth: depth, out: make([]atomic.Bool, depth)}
	if m.mem, err = c.peer.AllocMR(size*(depth+cfg.SQSize), UsageSend|UsageRecv); err != nil {
		c.messenger.Store(false)
		return nil, err
	}
	for i := range depth {
		if err := m.post(int32(i)); err != nil {
			m.mem.Close()
			c.messenger.Store(false)
			return nil, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		m.mem.Close()
		return nil, closedErr("messenger", nil)
	}
	c.msgMR = m.mem
	return m, nil
}

// post posts receive buffer i.
func (m *Messenger) post(i int32) error {
	return m.c.Recv(m.mem, int(i)*m.size, m.size, idRecv|uint64(i))
}

// Send sends p, at most the Messenger's size, as one message and waits
// until the send completes: p may be reused at once, and the other side
// has received the message.
func (m *Messenger) Send(ctx context.Context, p []byte) error {
	if m == nil {
		return errNil
	}
	if m.closed.Load() {
		return closedErr("send", nil)
	}
	if len(p) > m.size {
		return inval("message of %d bytes, more than %d", len(p), m.size)
	}
	i, id, err := m.rt.acquire(ctx)
	if err != nil {
		return err
	}
	// Each place in the send queue has its send buffer: one whose send
	// was abandoned is reused only after its completion freed the slot.
	off := (m.depth + int(i)) * m.size
	copy(m.mem.Bytes()[off:], p)
	if err := m.c.Send(m.mem, off, len(p), Op{Flags: CompletionAlways, Context: id}); err != nil {
		m.rt.release(i)
		return err
	}
	wc, err := m.rt.wait(ctx, i)
	if err != nil {
		return err
	}
	return wc.Err()
}

// Recv waits for the next message. Release it when done with its bytes;
// until then its buffer is out of the receive queue. When the connection
// ends (the peer disconnected or died) Recv returns an error of code
// CodeNoCompletion matching rdmacm.ErrDisconnected and
// syscall.ECONNRESET, as CQ.Wait does, whether the wait or a flushed
// receive noticed it first.
func (m *Messenger) Recv(ctx context.Context) (Message, error) {
	if m == nil {
		return Message{}, errNil
	}
	if m.closed.Load() {
		return Message{}, closedErr("recv", nil)
	}
	wc, err := m.rt.waitRecv(ctx)
	if err != nil {
		return Message{}, err
	}
	if err := wc.Err(); err != nil {
		// A failed receive: the connection is broken, and the buffer
		// would fail again. A flushed one means the QP left RTS, as
		// when the peer went away: say so as the waits do.
		if wc.Status == cq.WRFlushErr {
			return Message{}, &rpmaError{"rpma: recv: the connection ended: " + err.Error(), ErrNoCompletion,
				errors.Join(rdmacm.ErrDisconnected, err)}
		}
		return Message{}, err
	}
	i := int32(wc.ID & slotMask)
	if int(i) >= m.depth {
		return Message{}, inval("receive completion %#x of no buffer", wc.ID)
	}
	m.out[i].Store(true)
	return Message{m: m, i: i, n: int(wc.ByteLen)}, nil
}

// Bytes returns the message; valid until Release.
func (msg Message) Bytes() []byte {
	if msg.m == nil {
		return nil
	}
	off := int(msg.i) * msg.m.size
	return msg.m.mem.Bytes()[off : off+msg.n]
}

// Release gives the message's buffer back to the receive queue. A second
// Release of the same message is ErrInvalid.
func (msg Message) Release() error {
	if msg.m == nil {
		return errNil
	}
	if !msg.m.out[msg.i].CompareAndSwap(true, false) {
		return errReleased
	}
	return msg.m.post(msg.i)
}

// errReleased is a second Release's error, made once.
var errReleased = inval("message released twice")

// Close deregisters and frees the Messenger's buffers. The connection's
// Close closes its Messenger, after the connection's QP is gone; to
// close it before, make sure no message can arrive any more, since the
// receives it keeps posted use the buffers. Neither may race with Send,
// Recv or the use of a Message's bytes. Closing it again does nothing.
func (m *Messenger) Close() error {
	if m == nil {
		return errNil
	}
	if m.closed.Swap(true) {
		return nil
	}
	return m.mem.Close()
}

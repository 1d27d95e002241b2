package rpma

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
)

// ConnEvent is a connection's event (enum rpma_conn_event).
type ConnEvent int

// Connection events.
const (
	ConnUndefined   ConnEvent = -1
	ConnEstablished ConnEvent = 0
	ConnClosed      ConnEvent = 1
	ConnLost        ConnEvent = 2
	ConnRejected    ConnEvent = 3
	ConnUnreachable ConnEvent = 4
)

// String returns rpma_utils_conn_event_2str's text.
func (e ConnEvent) String() string {
	switch e {
	case ConnUndefined:
		return "Undefined connection event"
	case ConnEstablished:
		return "Connection established"
	case ConnClosed:
		return "Connection closed"
	case ConnLost:
		return "Connection lost"
	case ConnRejected:
		return "Connection rejected"
	case ConnUnreachable:
		return "Connection unreachable"
	}
	return "Unsupported connection event"
}

// Conn is a connection (rpma_conn).
type Conn struct {
	peer    *Peer
	ch      *rdmacm.EventChannel // the connection's own
	id      *rdmacm.ID
	req     *ConnRequest // its CQs and channel
	private []byte

	mu          sync.Mutex // guards private, directWrite and the scratch page
	directWrite bool
	// closed is set under mu by Close; the operations load it without
	// mu, before their arguments, so that a closed connection answers
	// ErrClosed whatever they are given.
	closed atomic.Bool
	raw    []byte // a page for flush reads and atomic write sources
	rawMR  *mr.MR

	// rt routes completions to the goroutines of Do and of a
	// Messenger; made on first use.
	rtOnce sync.Once
	rt     *router
	rtErr  error
	// messenger is set while a Messenger owns the connection's
	// receives; msgMR is its buffers, which Close frees after the QP.
	messenger atomic.Bool
	msgMR     *MR
	// listener is the Listener that accepted the connection, which
	// closes it if it is still open when the Listener closes.
	listener *Listener
}

// newConn moves the request's ID to an event channel of the
// connection's own, as rpma_conn_new does, and makes the scratch page the
// flush emulation reads into. On failure it releases everything the
// request held.
func newConn(r *ConnRequest) (*Conn, error) {
	c := &Conn{peer: r.peer, id: r.id, req: r, private: r.private}
	var err error
	if c.ch, err = rdmacm.NewEventChannel(); err != nil {
		r.delete()
		return nil, provider("event channel", err)
	}
	if err := r.id.Migrate(c.ch); err != nil {
		c.ch.Close()
		r.delete()
		return nil, provider("migrate", err)
	}
	if r.ch != nil {
		r.ch.Close() // the request's channel has no IDs left
		r.ch = nil
	}
	if c.raw, err = mr.Alloc(os.Getpagesize()); err != nil {
		c.Close()
		return nil, provider("flush buffer", err)
	}
	// READ_DST: the flush emulation's 8-byte reads land here.
	if c.rawMR, err = mr.Register(r.peer.pd, c.raw, r.peer.access(UsageReadDst)); err != nil {
		c.Close()
		return nil, provider("flush buffer", err)
	}
	return c, nil
}

// NextEvent waits for the connection's next event (rpma_conn_next_event).
// The first EventEstablished of a client carries the server's private
// data, which PrivateData returns from then on.
func (c *Conn) NextEvent(ctx context.Context) (ConnEvent, error) {
	if err := c.usable("next event"); err != nil {
		return ConnUndefined, err
	}
	e, err := c.ch.GetEvent(ctx)
	if errors.Is(err, rdmacm.ErrNoEvent) {
		return ConnUndefined, ErrNoEvent
	}
	if err != nil {
		if ctx.Err() != nil {
			return ConnUndefined, err
		}
		return ConnUndefined, provider("next event", err)
	}
	switch e.Type {
	case rdmacm.EventEstablished:
		c.mu.Lock()
		if c.private == nil && len(e.Param.PrivateData) > 0 {
			c.private = e.Param.PrivateData
		}
		c.mu.Unlock()
		if c.peer.iwarp && c.req.ch == nil {
			// The passive side of an iWARP connection learns
			// ESTABLISHED as it sends its MPA reply. siw's active
			// side fails its connect ("peer sent extra data",
			// CONNECT_ERROR -22) when bytes follow that reply before
			// it has handed the socket to the QP, so a read or send
			// posted at once could break the new connection (seen on
			// Linux 6.12 under load; docs/kernel-notes.md). Give it a
			// moment first, as the rsocket package does.
			t := time.NewTimer(iwarpSettle)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
		return ConnEstablished, nil
	case rdmacm.EventConnectError, rdmacm.EventDeviceRemoval:
		return ConnLost, nil
	case rdmacm.EventDisconnected, rdmacm.EventTimewaitExit:
		return ConnClosed, nil
	case rdmacm.EventRejected:
		return ConnRejected, nil
	case rdmacm.EventUnreachable:
		return ConnUnreachable, nil
	}
	return ConnUndefined, &rpmaError{fmt.Sprintf("rpma: unexpected %s", e.Type), ErrUnknown, nil}
}

// EventFd returns the file descriptor of the connection's event channel
// (rpma_conn_get_event_fd).
func (c *Conn) EventFd() int {
	if c == nil {
		return -1
	}
	return c.ch.Fd()
}

// PrivateData returns the other side's private data
// (rpma_conn_get_private_data).
func (c *Conn) PrivateData() []byte {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.private
}

// QPNum returns the connection's QP number (rpma_conn_get_qp_num).
func (c *Conn) QPNum() uint32 {
	if c == nil {
		return 0
	}
	return c.id.QP().Num()
}

// ApplyRemotePeerConfig takes the other side's config
// (rpma_conn_apply_remote_peer_cfg): with DirectWriteToPMem,
// FlushPersistent becomes possible.
func (c *Conn) ApplyRemotePeerConfig(pc PeerConfig) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.directWrite = pc.DirectWriteToPMem
}

// CQ returns the connection's main CQ (rpma_conn_get_cq).
func (c *Conn) CQ() *CQ {
	if c == nil {
		return nil
	}
	return c.req.cq
}

// RCQ returns the connection's receive CQ, or nil when it has none
// (rpma_conn_get_rcq).
func (c *Conn) RCQ() *CQ {
	if c == nil {
		return nil
	}
	return c.req.rcq
}

// CompletionFd returns the file descriptor of the completion channel
// the CQs share (rpma_conn_get_compl_fd); ErrNotSharedChannel when they
// do not share one.
func (c *Conn) CompletionFd() (int, error) {
	if err := c.usable("completion fd"); err != nil {
		return -1, err
	}
	if c.req.shared == nil {
		return -1, ErrNotSharedChannel
	}
	return c.req.shared.Fd(), nil
}

// Wait waits on the shared completion channel until one of the
// connection's CQs has a completion, re-arms it and returns it, saying
// whether it is the receive CQ (rpma_conn_wait). Without a shared
// channel it returns ErrNotSharedChannel. When ctx ends it returns ctx's
// error, and ErrClosed when the connection is closed. Any other failure
// of the wait is ErrNoCompletion (RPMA_E_NO_COMPLETION, as librpma
// returns when ibv_get_cq_event fails): poll the CQs with GetWC and wait
// again. Once the connection has ended (the peer disconnected or died,
// or Disconnect was called) it returns at once an error of kind
// ErrNoCompletion that also matches rdmacm.ErrDisconnected and
// syscall.ECONNRESET, as CQ.Wait does: drain the CQs with GetWC.
func (c *Conn) Wait(ctx context.Context) (q *CQ, isRCQ bool, err error) {
	if err := c.usable("wait"); err != nil {
		return nil, false, err
	}
	if c.req.shared == nil {
		return nil, false, ErrNotSharedChannel
	}
	got, err := c.id.WaitCQ(ctx, c.req.shared)
	if err != nil {
		return nil, false, waitErr(ctx, err)
	}
	switch {
	case got == c.req.cq.q:
		q = c.req.cq
	case c.req.rcq != nil && got == c.req.rcq.q:
		q, isRCQ = c.req.rcq, true
	default:
		return nil, false, &rpmaError{"rpma: wait: a completion of a CQ not the connection's", ErrUnknown, nil}
	}
	return q, isRCQ, provider("arm CQ", q.q.ReqNotify(false))
}

// iwarpSettle is how long the passive side of an iWARP connection waits
// after ESTABLISHED before it lets the application post (see NextEvent).
const iwarpSettle = 50 * time.Millisecond

// Disconnect starts tearing the connection down (rpma_conn_disconnect);
// ConnClosed follows.
//
// Unlike rpma_conn_disconnect, it first gives the operations posted
// before it up to the connection's timeout (ConnConfig.Timeout) to leave
// the send queue: the disconnect moves the QP to ERR, which flushes what
// is still queued. On Linux 6.1 rxe sent inside the post call, so a send
// just before a disconnect always went out; from 6.12 the post only queues
// rxe's requester, and without the wait the last message (librpma's
// examples send I_M_DONE unsignaled, then disconnect) was lost.
func (c *Conn) Disconnect() error {
	if err := c.usable("disconnect"); err != nil {
		return err
	}
	if qp := c.id.QP(); qp != nil {
		ctx, cancel := context.WithTimeout(context.Background(), c.req.cfg.Timeout)
		// Best effort: a peer that stopped answering keeps the queue
		// busy, and the disconnect then flushes what is left.
		qp.DrainSend(ctx)
		cancel()
	}
	return provider("disconnect", c.id.Disconnect())
}

// Close deletes the connection and everything it holds
// (rpma_conn_delete). Closing it again does nothing, as rpma_conn_delete
// does with a NULL *conn_ptr.
func (c *Conn) Close() error {
	if c == nil {
		return errNil
	}
	if l := c.listener; l != nil {
		defer l.forget(c) // after the unlock below: Accept holds l.mu, then c.mu
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		// As rpma_conn_delete with *conn_ptr NULL: nothing to do.
		return nil
	}
	c.closed.Store(true)
	var errs []error
	if c.rawMR != nil {
		errs = append(errs, c.rawMR.Close())
	}
	if c.raw != nil {
		errs = append(errs, mr.Free(c.raw))
	}
	errs = append(errs, c.id.Close(), c.req.release())
	if c.ch != nil {
		errs = append(errs, c.ch.Close())
	}
	if c.msgMR != nil { // its receives went with the QP
		errs = append(errs, c.msgMR.Close())
	}
	return provider("delete connection", errors.Join(errs...))
}

package rdmacm

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
	"github.com/purerdma/purerdma/uverbs"
)

// Path is the connection manager's character device.
const Path = "/dev/infiniband/rdma_cm"

// ErrNoEvent is returned by TryGetEvent when no event is pending; it
// matches syscall.EAGAIN as well, which rdma_get_cm_event sets on a
// non-blocking channel.
var ErrNoEvent = verbs.NewSentinel("no event pending", syscall.EAGAIN)

// ErrClosed is returned by operations on a closed (or nil) channel or ID.
// It is uverbs.ErrClosed, so that one test covers a closed ID and the
// closed QP or CQ under it, and it matches syscall.EBADF as well.
var ErrClosed = uverbs.ErrClosed

var nextUID atomic.Uint64

// EventChannel delivers the events of the IDs created on it (struct
// rdma_event_channel). Its methods may be called from several goroutines.
type EventChannel struct {
	file *os.File
	raw  syscall.RawConn

	// reader holds the token that lets one goroutine read the file at a
	// time, since the read deadline is the file's. A waiter for it gives
	// up when its context ends, and wakes when the reader queues an event
	// in pending (grown), which may be its own: waiting on a mutex
	// instead kept a GetEvent past its deadline, and a WaitEvent away
	// from its queued event, for as long as another goroutine's read
	// found nothing (test/soak).
	reader chan struct{}

	mu      sync.Mutex
	closed  bool
	ids     map[uint64]*ID // by user handle
	pending []*Event       // read for an ID while waiting for another's
	grown   chan struct{}  // closed, and replaced, when pending gains an event
}

// Fd returns the channel's file descriptor, for poll(2)-style
// integration; it becomes readable when an event is pending in the
// kernel. Events already read into the channel are not: those another
// goroutine's WaitEvent read for this one, and those a completion wait
// (ID.WaitCQ, GetSendComp, GetRecvComp) read while it watched its
// connection. TryGetEvent returns them, so drain it after each wake-up.
// The fd stays owned by the channel.
func (ch *EventChannel) Fd() int {
	if ch == nil {
		return -1
	}
	fd := -1
	ch.raw.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// do runs a command on the channel's file.
func (ch *EventChannel) do(cmd uint32, req []byte, respOff int, resp []byte) error {
	return ch.doWith(write, cmd, req, respOff, resp)
}

// doWith runs a command on the channel's file through w: write, or
// writeUnsignalled for a command a signal must not interrupt.
func (ch *EventChannel) doWith(w func(fd int, cmd uint32, req []byte, respOff int, resp []byte) error, cmd uint32, req []byte, respOff int, resp []byte) error {
	var err error
	if cerr := ch.raw.Control(func(fd uintptr) { err = w(int(fd), cmd, req, respOff, resp) }); cerr != nil {
		return ErrClosed
	}
	// A kernel errno matches its sentinel too (EINVAL is ErrInvalid, ...).
	return verbs.Public(err)
}

// GetEvent waits for the next event of any ID on the channel
// (rdma_get_cm_event) until ctx ends.
func (ch *EventChannel) GetEvent(ctx context.Context) (*Event, error) {
	if ch == nil {
		return nil, ErrClosed
	}
	return ch.next(ctx, nil)
}

// TryGetEvent returns the next event if one is pending, and ErrNoEvent
// otherwise.
func (ch *EventChannel) TryGetEvent() (*Event, error) {
	if ch == nil {
		return nil, ErrClosed
	}
	if e := ch.popPending(nil); e != nil {
		return e, nil
	}
	var (
		resp abi.UcmEventResp
		err  error
	)
	if cerr := ch.raw.Control(func(fd uintptr) { err = getEvent(int(fd), &resp) }); cerr != nil {
		return nil, ErrClosed
	}
	if errors.Is(err, syscall.EAGAIN) {
		return nil, ErrNoEvent
	}
	if err != nil {
		return nil, err
	}
	e, err := ch.decode(&resp)
	if e == nil && err == nil {
		// The event of an ID destroyed meanwhile: there is none for the
		// caller.
		return nil, ErrNoEvent
	}
	return e, err
}

// next returns the next event for id (any ID when id is nil), keeping the
// events of other IDs for their own waiters.
func (ch *EventChannel) next(ctx context.Context, id *ID) (*Event, error) {
	for {
		e, grown := ch.pendingOr(id)
		if e != nil {
			return e, nil
		}
		select {
		case ch.reader <- struct{}{}:
		case <-grown:
			continue // perhaps with our event
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		// The last reader may have queued our event after we looked.
		if e := ch.popPending(id); e != nil {
			<-ch.reader
			return e, nil
		}
		e, err := ch.read(ctx)
		if err != nil {
			<-ch.reader
			return nil, err
		}
		if id == nil || e.ID == id || e.Listener == id {
			<-ch.reader
			return e, nil
		}
		// Queued before the token goes back: a waiter that takes the
		// token next looks in pending first and must find its event
		// there, not go and read the file for an event already read.
		ch.queue(e)
		<-ch.reader
	}
}

// pendingOr takes a pending event for id, or returns the channel that is
// closed when another is queued.
func (ch *EventChannel) pendingOr(id *ID) (*Event, <-chan struct{}) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if e := ch.popPendingLocked(id); e != nil {
		return e, nil
	}
	return nil, ch.grown
}

func (ch *EventChannel) popPending(id *ID) *Event {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.popPendingLocked(id)
}

func (ch *EventChannel) popPendingLocked(id *ID) *Event {
	for i, e := range ch.pending {
		if id == nil || e.ID == id || e.Listener == id {
			ch.pending = append(ch.pending[:i], ch.pending[i+1:]...)
			return e
		}
	}
	return nil
}

// read blocks on the poller until the kernel has an event, then takes it.
// The caller holds the reader token.
func (ch *EventChannel) read(ctx context.Context) (*Event, error) {
	dl, _ := ctx.Deadline()
	if err := ch.file.SetReadDeadline(dl); err != nil {
		return nil, ErrClosed
	}
	if ctx.Done() != nil {
		// A deadline in the past wakes the parked read at once.
		stop := context.AfterFunc(ctx, func() { ch.file.SetReadDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	for {
		var (
			resp abi.UcmEventResp
			err  error
		)
		rerr := ch.raw.Read(func(fd uintptr) bool {
			err = getEvent(int(fd), &resp)
			return !errors.Is(err, syscall.EAGAIN)
		})
		switch {
		case rerr == nil && err == nil:
			// An event left the kernel: it is decoded and returned even
			// when ctx ended meanwhile, or nobody would ever see it (a
			// completion wait ends its watcher's ctx as it wakes).
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(rerr, os.ErrDeadlineExceeded) && (dl.IsZero() || time.Now().Before(dl)):
			// Not ctx's deadline: an earlier reader's context ended as
			// its read returned, and its AfterFunc moved the file's
			// deadline after this read had set its own. Set it back.
			if err := ch.file.SetReadDeadline(dl); err != nil {
				return nil, ErrClosed
			}
			continue
		case errors.Is(rerr, os.ErrDeadlineExceeded):
			// The file's deadline is ctx's own (or in the past once ctx
			// ended), and may fire a moment before ctx's timer does. Wait
			// for it, so that callers who check ctx.Err() see it too.
			<-ctx.Done()
			return nil, ctx.Err()
		case rerr != nil:
			return nil, ErrClosed
		case err != nil:
			return nil, err
		}
		// An event of an ID destroyed meanwhile is dropped.
		if e, err := ch.decode(&resp); e != nil || err != nil {
			return e, err
		}
	}
}

func getEvent(fd int, resp *abi.UcmEventResp) error {
	var req abi.UcmGetEvent
	return write(fd, abi.RDMA_USER_CM_CMD_GET_EVENT, ucmd.Bytes(&req), 0, ucmd.Bytes(resp))
}

// register gives id a user handle, by which the kernel names it in events.
func (ch *EventChannel) register(id *ID) error {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.closed {
		return ErrClosed
	}
	// Unique across channels, so that an ID keeps its handle when it
	// migrates.
	id.uid = nextUID.Add(1)
	ch.ids[id.uid] = id
	return nil
}

func (ch *EventChannel) unregister(id *ID) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	delete(ch.ids, id.uid)
	kept := ch.pending[:0]
	for _, e := range ch.pending {
		if e.ID != id {
			kept = append(kept, e)
		}
	}
	ch.pending = kept
}

func (ch *EventChannel) lookup(uid uint64) *ID {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.ids[uid]
}

// Close destroys the IDs still on the channel and closes it
// (rdma_destroy_event_channel). It is safe to call more than once.
func (ch *EventChannel) Close() error {
	if ch == nil {
		return ErrClosed
	}
	ch.mu.Lock()
	if ch.closed {
		ch.mu.Unlock()
		return nil
	}
	ch.closed = true
	ids := make([]*ID, 0, len(ch.ids))
	for _, id := range ch.ids {
		ids = append(ids, id)
	}
	ch.mu.Unlock()
	var errs []error
	for _, id := range ids {
		errs = append(errs, id.Close())
	}
	errs = append(errs, ch.file.Close())
	return errors.Join(errs...)
}

func (ch *EventChannel) isClosed() bool {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.closed
}

package rdmacm

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/verbs"
)

// ErrDisconnected is returned by the completion waits of an ID (WaitCQ,
// GetSendComp, GetRecvComp) once its connection has ended: the peer
// disconnected, its process died (the kernel disconnects for it), the
// local side called Disconnect, or the device went away. It matches
// syscall.ECONNRESET, as a TCP read from a reset connection does.
var ErrDisconnected = verbs.NewSentinel("connection ended", syscall.ECONNRESET)

// markGone records that the ID's connection has ended. The channel marks
// it when it reads the event, whoever reads it, so that the event itself
// stays for WaitEvent (users wait for EventDisconnected after a
// completion wait failed) while every completion wait sees the mark.
func (id *ID) markGone() {
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.ended {
		return
	}
	id.ended = true
	if id.gone != nil {
		close(id.gone)
	}
}

// goneCh returns a channel closed once the connection has ended, made on
// first use like doneCh.
func (id *ID) goneCh() <-chan struct{} {
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.gone == nil {
		id.gone = make(chan struct{})
		if id.ended {
			close(id.gone)
		}
	}
	return id.gone
}

func (id *ID) isGone() bool {
	id.mu.Lock()
	defer id.mu.Unlock()
	return id.ended
}

// WaitCQ waits for the next completion event of ch, as ch.Wait does, and
// also watches the ID's connection: when it ends (see ErrDisconnected)
// the wait returns an error matching ErrDisconnected, and when the ID is
// closed one matching ErrClosed. The caller then still polls the CQs on
// ch: the completions they hold, the flushed work requests of a QP moved
// to the error state among them, are not lost. Once the connection has
// ended WaitCQ returns at once.
//
// While it waits, WaitCQ reads the ID's event channel: the events it
// reads stay queued for WaitEvent and GetEvent, its own ID's included,
// so that WaitEvent(ctx, EventDisconnected) after it still gets the
// disconnection. It does so only when it has to sleep: an event already
// on ch is taken at once, leaving the ID's channel alone. Sleeping, it
// runs one goroutine, which has ended when WaitCQ returns.
func (id *ID) WaitCQ(ctx context.Context, ch *cq.Channel) (*cq.CQ, error) {
	if id == nil || ch == nil {
		return nil, ErrClosed
	}
	if err := id.alive(); err != nil {
		return nil, err
	}
	if id.isGone() {
		return nil, errDisconnected
	}
	// An event there already is taken without watching: a caller that
	// waits only once poll(2) found the channel ready (librpma's
	// examples do) and polls the ID's channel too must find the ID's
	// events in the kernel, where the fd shows them, not read by a
	// watcher (see EventChannel.Fd).
	if raw, err := ch.SyscallConn(); err == nil && readable(raw) {
		return ch.Wait(ctx)
	}
	wctx, stop := id.watch(ctx)
	c, err := ch.Wait(wctx)
	stop()
	switch {
	case err == nil:
		return c, nil
	case ctx.Err() != nil:
		return nil, err
	case id.alive() != nil:
		return nil, ErrClosed
	case id.isGone():
		return nil, errDisconnected
	}
	return nil, err
}

// errDisconnected is WaitCQ's error, made once: the completion helpers
// are on the data path.
var errDisconnected error = fmt.Errorf("rdmacm: wait for a completion: %w", ErrDisconnected)

// watch returns a context derived from ctx that also ends when the ID's
// connection ends or the ID closes, and the function that stops watching
// and returns once the watching goroutine has ended.
func (id *ID) watch(ctx context.Context) (context.Context, func()) {
	wctx, cancel := context.WithCancel(ctx)
	gone, done, ch := id.goneCh(), id.doneCh(), id.ch
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		if ch.pumpUntil(wctx, gone, done) {
			cancel()
		}
	}()
	return wctx, func() {
		cancel()
		<-exited
	}
}

// pumpUntil reads the channel's events into its pending queue until gone
// or done closes (true) or ctx ends or the channel fails (false). Another
// goroutine's read marks gone as well: pumpUntil reads only while it
// holds the reader token, and waits for gone while another holds it.
func (ch *EventChannel) pumpUntil(ctx context.Context, gone, done <-chan struct{}) bool {
	ended := func() bool {
		select {
		case <-gone:
			return true
		case <-done:
			return true
		default:
			return false
		}
	}
	for {
		if ended() {
			return true
		}
		select {
		case ch.reader <- struct{}{}:
		case <-gone:
			return true
		case <-done:
			return true
		case <-ctx.Done():
			return false
		}
		if ended() { // the last reader may have read our event
			<-ch.reader
			return true
		}
		e, err := ch.read(ctx)
		if err != nil {
			<-ch.reader
			if ctx.Err() != nil || errors.Is(err, ErrClosed) {
				return ended()
			}
			// An event that failed to decode (a connection request that
			// could not be bound) is gone with its error; go on.
			continue
		}
		ch.queue(e)
		<-ch.reader
	}
}

// queue appends e to the pending events and wakes their waiters.
func (ch *EventChannel) queue(e *Event) {
	ch.mu.Lock()
	ch.pending = append(ch.pending, e)
	close(ch.grown)
	ch.grown = make(chan struct{})
	ch.mu.Unlock()
}

package cq

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/purerdma/purerdma/internal/verbs"
	"github.com/purerdma/purerdma/uverbs"
)

// Channel is a completion channel (struct ibv_comp_channel): the file on
// which armed CQs report completions. Several CQs may share one.
type Channel struct {
	core *verbs.Context
	file *os.File // non-blocking, on the runtime poller
	id   uint64   // in the context's object table
	ev   verbs.EventFile

	mu     sync.Mutex
	cqs    int // CQs using the channel
	closed bool
}

// Fd returns the channel's file descriptor, for poll(2)-style integration
// (librpma's rpma_conn_get_completion_fd). It stays owned by the channel.
func (ch *Channel) Fd() int {
	if ch == nil {
		return -1
	}
	return int(ch.file.Fd())
}

// SyscallConn returns the channel's file as a raw connection, for
// readiness checks and poll(2)-style integration that keep the file
// non-blocking and on the runtime poller (Fd's os.File.Fd may not). The
// file stays owned by the channel.
func (ch *Channel) SyscallConn() (syscall.RawConn, error) {
	if ch == nil {
		return nil, ErrClosed
	}
	ch.mu.Lock()
	closed := ch.closed
	ch.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	return ch.file.SyscallConn()
}

// Wait blocks until an armed CQ on the channel has a completion and
// returns that CQ, as ibv_get_cq_event does; the event is acknowledged at
// once. It returns ctx's error when ctx ends first and ErrClosed when the
// channel closes. Waits on one channel run one at a time.
func (ch *Channel) Wait(ctx context.Context) (*CQ, error) {
	if ch == nil {
		return nil, ErrClosed
	}
	var ev [8]byte // struct ib_uverbs_comp_event_desc: the CQ's user handle
	for {
		if err := ch.ev.Read(ctx, ev[:]); err != nil {
			return nil, fmt.Errorf("cq: wait: %w", err)
		}
		// An event of a CQ destroyed meanwhile names no live object.
		if c, ok := ch.core.Lookup(binary.NativeEndian.Uint64(ev[:])).(*CQ); ok {
			c.event()
			return c, nil
		}
	}
}

func (ch *Channel) attach() (int, error) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.closed {
		return 0, ErrClosed
	}
	ch.cqs++
	return int(ch.file.Fd()), nil
}

func (ch *Channel) detach() {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.cqs--
}

// Close closes the channel. It fails with uverbs.ErrBusy while CQs use
// it, as ibv_destroy_comp_channel does. It is safe to call more than once.
func (ch *Channel) Close() error {
	if ch == nil {
		return ErrClosed
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.closed {
		return nil
	}
	if ch.cqs > 0 {
		return fmt.Errorf("cq: close channel: %d CQs use it: %w", ch.cqs, uverbs.ErrBusy)
	}
	ch.closed = true
	ch.core.Remove(ch.id)
	return ch.file.Close()
}

// release closes the file when the context closes.
func (ch *Channel) release() {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if !ch.closed {
		ch.closed = true
		ch.file.Close()
	}
}

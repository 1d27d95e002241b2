package verbs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// EventFile is a non-blocking event file of the kernel (the async event
// file, a completion channel) read on the runtime poller.
type EventFile struct {
	File *os.File
	mu   sync.Mutex // one reader at a time: the read deadline is per file
}

// Read reads one event into buf, blocking until there is one, ctx ends
// (its error is returned) or the file closes (ErrClosed).
func (e *EventFile) Read(ctx context.Context, buf []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	dl, _ := ctx.Deadline()
	if err := e.File.SetReadDeadline(dl); err != nil {
		return e.err(ctx, err)
	}
	if ctx.Done() != nil {
		// A deadline in the past wakes the blocked read at once.
		stop := context.AfterFunc(ctx, func() { e.File.SetReadDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	n, err := e.File.Read(buf)
	for errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil && (dl.IsZero() || time.Now().Before(dl)) {
		// Not ctx's deadline: an earlier reader's context ended as its
		// read returned, and its AfterFunc moved the file's deadline
		// after this read had set its own. Set it back.
		if err = e.File.SetReadDeadline(dl); err != nil {
			return e.err(ctx, err)
		}
		n, err = e.File.Read(buf)
	}
	if err != nil {
		return e.err(ctx, err)
	}
	if n != len(buf) {
		return fmt.Errorf("short event read: %d of %d bytes", n, len(buf))
	}
	return nil
}

func (e *EventFile) err(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The file's deadline is ctx's (or in the past once ctx ended),
		// and may fire a moment before ctx's own timer does. Wait for it,
		// so that callers who check ctx.Err() see it too.
		<-ctx.Done()
		return ctx.Err()
	case errors.Is(err, os.ErrClosed) || e.closed():
		return ErrClosed
	}
	return fmt.Errorf("read event: %w", err)
}

// closed reports whether the file is closed. SetReadDeadline on a closed
// file returns internal/poll's ErrFileClosing, which no exported error
// matches; Read wraps it as os.ErrClosed, and takes the file's read lock
// (failing when closed) before it returns early for an empty buffer.
func (e *EventFile) closed() bool {
	_, err := e.File.Read(nil)
	return errors.Is(err, os.ErrClosed)
}

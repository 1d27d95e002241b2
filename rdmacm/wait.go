package rdmacm

import (
	"context"
	"fmt"
)

// UnexpectedEventError is returned by WaitEvent for an event of another
// type than the one awaited; errors.Is matches the event's own error
// (ErrRejected, an errno) when it has one.
type UnexpectedEventError struct {
	Want  EventType
	Event *Event
}

// Error names the awaited and the received event.
func (e *UnexpectedEventError) Error() string {
	return fmt.Sprintf("rdmacm: waiting for %s, got %s", e.Want, e.Event)
}

// Unwrap returns the event's error.
func (e *UnexpectedEventError) Unwrap() error { return e.Event.Err() }

// WaitEvent waits until ctx ends for the ID's next event and checks that
// it is of type want. Events of other IDs on the channel stay queued for
// their own waiters. For a listening ID, the next event is a connection
// request: its Event.ID is the new ID.
func (id *ID) WaitEvent(ctx context.Context, want EventType) (*Event, error) {
	if id == nil {
		return nil, ErrClosed
	}
	if err := id.alive(); err != nil {
		return nil, err
	}
	// No event comes for a destroyed ID: Close ends the wait.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := id.doneCh()
	go func() {
		select {
		case <-done:
			cancel()
		case <-ctx.Done():
		}
	}()
	e, err := id.ch.next(ctx, id)
	if err != nil {
		if id.alive() != nil {
			return nil, ErrClosed
		}
		return nil, err
	}
	if e.Type != want {
		return e, &UnexpectedEventError{Want: want, Event: e}
	}
	return e, nil
}

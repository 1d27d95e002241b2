package rpma

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rdmacm"
)

// wcSource is where a router's completions come from: a connection's CQs
// on a device, a fake in the host tests. Only the goroutine that holds
// the router's poll token calls it.
type wcSource interface {
	// poll moves up to len(wc) completions into wc; 0 and nil when there
	// are none.
	poll(wc []cq.WC) (int, error)
	// wait blocks until a completion may have arrived, or ctx ends. A
	// wake-up with nothing to poll is allowed (ErrNoCompletion, or nil).
	wait(ctx context.Context) error
}

// The work request IDs a router hands out. Bit 63 marks an operation
// that waits for its own completion: bits 32-61 carry its slot's
// generation and bits 0-31 the slot. Bit 62 marks a receive, which any
// Recv waiter may take: bits 0-31 carry the receive buffer. Completions
// with neither bit are not the router's and are dropped.
const (
	idRouted  = 1 << 63
	idRecv    = 1 << 62
	genBits   = 30
	genMask   = 1<<genBits - 1
	slotMask  = 1<<32 - 1
	slotShift = 32
)

// The states of a slot, in the low 2 bits of its word; the generation is
// in the bits above, so that one compare-and-swap checks both.
const (
	slotFree      = 0 // in the free channel, or being taken
	slotWaiting   = 1 // posted; its waiter waits for the completion
	slotDone      = 2 // the completion is in done
	slotAbandoned = 3 // the waiter left (ctx ended); the poller frees it
)

// slot is one operation in flight.
type slot struct {
	word atomic.Uint64 // generation<<2 | state
	done chan cq.WC    // capacity 1: the completion
}

// router hands each completion of a source to the goroutine that waits
// for it. There is no polling goroutine of its own: a waiter takes the
// poll token, polls for everybody and passes the token on when its own
// completion arrives, so that whichever goroutine polls, each waiter gets
// exactly its own completion. Nothing in the steady state allocates: the
// slots, their channels and the free list are made once.
type router struct {
	src   wcSource
	slots []slot
	free  chan int32    // the free slots
	tok   chan struct{} // capacity 1: held by the goroutine that polls
	recv  chan cq.WC    // completed receives, for any Recv waiter
	dead  chan struct{} // closed when the source failed for good
	once  sync.Once
	err   error     // why, set before dead is closed
	wc    [16]cq.WC // the token holder's batch
}

// newRouter makes a router for depth operations in flight and recvDepth
// completed receives.
func newRouter(src wcSource, depth, recvDepth int) *router {
	r := &router{
		src:   src,
		slots: make([]slot, depth),
		free:  make(chan int32, depth),
		tok:   make(chan struct{}, 1),
		recv:  make(chan cq.WC, max(recvDepth, 1)),
		dead:  make(chan struct{}),
	}
	for i := range r.slots {
		r.slots[i].done = make(chan cq.WC, 1)
		r.free <- int32(i)
	}
	return r
}

// spinPolls is how many empty polls the poller makes, yielding between
// them, before it sleeps on the completion channel: a completion on the
// software devices takes microseconds, and the sleep costs two system
// calls and a re-arm.
const spinPolls = 64

// acquire takes a free slot, waiting while all are in flight, and
// returns it with the work request ID to post its operation with.
func (r *router) acquire(ctx context.Context) (int32, uint64, error) {
	select {
	case <-r.dead: // first: a free slot would hide the failure
		return 0, 0, r.err
	default:
	}
	var i int32
	select {
	case i = <-r.free:
	case <-r.dead:
		return 0, 0, r.err
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	s := &r.slots[i]
	gen := (s.word.Load()>>2 + 1) & genMask
	s.word.Store(gen<<2 | slotWaiting)
	return i, idRouted | gen<<slotShift | uint64(i), nil
}

// release gives back a slot whose operation was not posted.
func (r *router) release(i int32) {
	s := &r.slots[i]
	s.word.Store(s.word.Load() &^ 3) // slotFree, same generation
	r.free <- i
}

// wait waits for the completion of slot i's operation. When ctx ends
// first, the slot is left to the poller, which frees it when the
// completion comes; when the source fails, every waiter gets its error.
func (r *router) wait(ctx context.Context, i int32) (cq.WC, error) {
	s := &r.slots[i]
	wc, err := r.await(ctx, s.done)
	if err == nil {
		r.release(i)
		return wc, nil
	}
	if errors.Is(err, errRouterDead) {
		return wc, r.err // the slot stays out: nothing will complete it
	}
	w := s.word.Load()
	if w&3 == slotWaiting && s.word.CompareAndSwap(w, w&^3|slotAbandoned) {
		return cq.WC{}, err
	}
	// The completion came as ctx ended: it is this operation's result.
	wc = <-s.done
	r.release(i)
	return wc, nil
}

// waitRecv waits for a completed receive.
func (r *router) waitRecv(ctx context.Context) (cq.WC, error) {
	wc, err := r.await(ctx, r.recv)
	if errors.Is(err, errRouterDead) {
		return wc, r.err
	}
	return wc, err
}

// errRouterDead tells await's callers to answer the router's error.
var errRouterDead = errors.New("router failed")

// await waits until ch has a completion, polling for everybody while it
// holds the poll token. It returns ctx's error when ctx ends and
// errRouterDead once the source has failed; a completion already in ch
// wins over both.
func (r *router) await(ctx context.Context, ch chan cq.WC) (cq.WC, error) {
	for {
		select {
		case wc := <-ch:
			return wc, nil
		case <-r.dead:
			select {
			case wc := <-ch:
				return wc, nil
			default:
			}
			return cq.WC{}, errRouterDead
		case <-ctx.Done():
			return cq.WC{}, ctx.Err()
		case r.tok <- struct{}{}:
			err := r.pollFor(ctx, ch)
			<-r.tok
			if err != nil && ctx.Err() == nil {
				r.fail(err)
			}
		}
	}
}

// pollFor polls the source, handing out what it finds, until ch has a
// completion. Its caller holds the poll token.
func (r *router) pollFor(ctx context.Context, ch chan cq.WC) error {
	for spins := 0; ; {
		if len(ch) > 0 {
			return nil
		}
		n, err := r.src.poll(r.wc[:])
		if err != nil {
			return err
		}
		for i := range n {
			r.deliver(&r.wc[i])
		}
		if n > 0 || len(ch) > 0 {
			spins = 0
			continue
		}
		if spins < spinPolls {
			spins++
			runtime.Gosched()
			continue
		}
		spins = 0
		// ErrNoCompletion is a wake-up with nothing to poll, unless the
		// connection has ended (CQ.Wait says so with an error that is
		// both): then no completion will come, and every waiter is told.
		if err := r.src.wait(ctx); err != nil && (!errors.Is(err, ErrNoCompletion) || errors.Is(err, rdmacm.ErrDisconnected)) {
			return err
		}
	}
}

// deliver hands one completion to its waiter.
func (r *router) deliver(wc *cq.WC) {
	switch {
	case wc.ID&idRouted != 0:
		i := wc.ID & slotMask
		if i >= uint64(len(r.slots)) {
			return
		}
		s := &r.slots[i]
		gen := wc.ID >> slotShift & genMask
		switch w := s.word.Load(); {
		case w>>2 != gen:
			// A stale completion of an earlier use of the slot (siw
			// may flush a read twice: docs/faults.md).
		case w&3 == slotWaiting && s.word.CompareAndSwap(w, gen<<2|slotDone):
			s.done <- *wc
		case w&3 == slotAbandoned && s.word.CompareAndSwap(w, gen<<2|slotFree):
			r.free <- int32(i)
		}
	case wc.ID&idRecv != 0:
		select {
		case r.recv <- *wc:
		default: // more receives completed than were posted: not ours
		}
	}
}

// fail ends the router: every waiter, now and later, gets err.
func (r *router) fail(err error) {
	r.once.Do(func() {
		r.err = err
		close(r.dead)
	})
}

package cq

import (
	"fmt"
	"iter"

	"github.com/purerdma/purerdma/internal/verbs"
)

// Completions returns an iterator over at most limit completions, oldest
// first, what ibv_start_poll, ibv_next_poll and ibv_end_poll are to C:
//
//	for wc, err := range c.Completions(64) {
//		if err != nil { ... } // the CQ is closed, or limit < 1
//		...
//	}
//
// The iteration ends when the CQ is empty or limit completions were
// yielded. The slots of the completions taken go back to the kernel once,
// when the loop ends (at a break, too), instead of once per completion; a
// break leaves the completions not yet yielded in the CQ for the next
// poll. An error is yielded once, with a zero WC, and ends the iteration:
// ErrClosed for a nil or closed CQ (also when another goroutine closes it
// during the loop), uverbs.ErrInvalid for limit < 1.
//
// Unlike ibv_start_poll, the CQ is not locked while the loop body runs,
// only while each completion is taken: the body may call Poll, ReqNotify
// or Close on the same CQ without deadlocking, and a completion another
// goroutine polls meanwhile goes to that goroutine alone.
//
// Neither the iterator nor the loop allocates, as long as the iterator is
// ranged over where Completions is called (so that the compiler keeps
// both closures on the stack).
func (c *CQ) Completions(limit int) iter.Seq2[WC, error] {
	return func(yield func(WC, error) bool) {
		if c == nil {
			yield(WC{}, ErrClosed)
			return
		}
		if limit < 1 {
			yield(WC{}, fmt.Errorf("cq: completions: at most %d: %w", limit, verbs.ErrInvalid))
			return
		}
		c.iterate(limit, yield)
	}
}

// iterate is Completions' loop, out of line so that the closure
// Completions returns stays small enough to inline.
func (c *CQ) iterate(limit int, yield func(WC, error) bool) {
	// The provider writes into c.scratch under the lock, as for Poll: a
	// local passed to the interface method would escape to the heap.
	var w WC
	for taken := 0; ; taken++ {
		c.life.Lock()
		if c.life.Gone() {
			// The ring is unmapped: the slots taken went back with it.
			c.life.Unlock()
			yield(WC{}, ErrClosed)
			return
		}
		p := &c.scratch[0]
		if taken == limit || !c.ring.Take(p) {
			c.ring.Release()
			c.life.Unlock()
			return
		}
		w.fill(p)
		c.life.Unlock()
		if !yield(w, nil) {
			c.endPoll()
			return
		}
	}
}

// endPoll hands back the slots Take kept, unless the CQ was closed
// meanwhile (then they went back with the ring).
func (c *CQ) endPoll() {
	c.life.Lock()
	if !c.life.Gone() {
		c.ring.Release()
	}
	c.life.Unlock()
}

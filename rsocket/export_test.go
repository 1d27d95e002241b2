package rsocket

import (
	"errors"
	"time"

	"github.com/purerdma/purerdma/uverbs"
)

// BreakQP moves c's QP to the error state behind the Conn's back, as a
// peer that vanished without a disconnect: on rxe its QP then drops what
// arrives without an acknowledgement; siw closes the TCP connection.
func BreakQP(c *Conn) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.qp.Modify(&uverbs.QPAttr{State: uverbs.QPSErr}, uverbs.QPAttrState)
}

// Queued is how many bytes c has received and not yet read.
func Queued(c *Conn) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rqueued
}

// CloseCtrlBusy closes c right after taking every free control slot with
// keepalives, whose completions cannot have been processed yet: Close
// must wait for a slot to tell the peer.
func CloseCtrlBusy(c *Conn) error {
	c.mu.Lock()
	for c.ctrlAvail() {
		seq := c.ctrlSeq
		if c.sendKeepalive(); c.ctrlSeq == seq {
			c.mu.Unlock()
			return errors.New("a keepalive took no control slot")
		}
	}
	c.mu.Unlock()
	return c.Close()
}

// CloseHeld closes c as a passive iWARP side that has not heard from its
// peer yet (holdSend): Close must wait out the hold to tell the peer.
func CloseHeld(c *Conn) error {
	c.mu.Lock()
	c.holdSend = true
	c.holdUntil = time.Now().Add(holdTimeout)
	c.mu.Unlock()
	return c.Close()
}

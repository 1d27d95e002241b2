package cq

import (
	"fmt"
	"unsafe"

	"github.com/purerdma/purerdma/internal/provider/mmio"
)

// Poller is a CQ's polling owned by one goroutine: its Poll (and, on
// mlx5, its ReqNotify) takes no lock, where the CQ's takes a spin lock
// (one locked instruction per call). It is rdma-core's thread domain
// made memory-safe: the CQ's Close, Resize, ReqNotify and the QPs that
// clean their completions out of it still work from any goroutine, and
// wait for a Poll or ReqNotify in progress to return (paying a
// membarrier(2) system call for it while the CQ is owned). Get one with
// CQ.Own; only one goroutine may use it, and Release gives the CQ back.
// CQ.Poll from other goroutines stays correct meanwhile, but each call
// pays that system call: poll through the owner.
type Poller struct {
	c   *CQ     // nil after Release
	drv drivers // the CQ's driver by its concrete type, as the CQ keeps it
}

// Own gives the CQ's polling to the calling goroutine. It fails with
// uverbs.ErrBusy while another Poller owns it, and with ErrClosed on a
// closed CQ. Where the kernel lacks membarrier (before Linux 4.14) or
// outside Linux, the Poller takes the lock on each Poll: correct, without
// the gain.
func (c *CQ) Own() (*Poller, error) {
	if c == nil {
		return nil, ErrClosed
	}
	if err := c.life.Own(); err != nil {
		return nil, fmt.Errorf("cq: own: %w", err)
	}
	return &Poller{c: c, drv: driversOf(c.ring)}, nil
}

// Poll polls as CQ.Poll does, without the lock. Call it from the owner
// only.
//
//go:nosplit
func (p *Poller) Poll(wc []WC) (int, error) {
	// No stack check (nosplit): docs/architecture.md, The data path.
	if p == nil || p.c == nil {
		return 0, ErrClosed
	}
	c := p.c
	if !c.life.Enter() {
		// The CQ is changing or gone: the locked way waits or says so.
		return c.Poll(wc)
	}
	// Poll's dispatch (drivers), written out here too: a call would
	// cost more than the lock this path saves. As in Poll, only c and
	// wc's array live across the driver's call.
	wp := unsafe.SliceData(wc)
	var n int
	var failed bool
	if r := p.drv.mlx; r != nil {
		if r.Empty() {
			c.life.Leave()
			return 0, nil
		}
		n, failed = r.PollFound(driverWCs(wc))
	} else if r := p.drv.rx; r != nil {
		n, failed = r.PollStatus(driverWCs(wc))
	} else if r := p.drv.sw; r != nil {
		n, failed = r.PollStatus(driverWCs(wc))
	} else {
		n = c.drainCopy(wc)
	}
	c.life.Leave()
	if failed {
		clearFailedN(wp, n)
	}
	return n, nil
}

// ReqNotify arms the CQ as CQ.ReqNotify does, without the lock: the
// owner that polls the CQ empty arms it before it waits for the event
// and polls again. Call it from the owner only.
//
// No other goroutine changes what the arm reads or writes while the owner
// is inside the gate: the consumer index is the owner's polls', and the
// arm sequence number (completion events), Resize and Close change under
// the lock, which shuts the gate and waits for the owner to leave. So the
// doorbell record and the UAR's doorbell stay mapped while the owner
// arms, and an arm never needs a locked instruction, as libmlx5's
// mlx5_arm_cq takes none; unlike that arm, this one is memory-safe
// against a Close in another goroutine. A CQ without a doorbell to ring
// in user space, or whose gate is shut, arms through CQ.ReqNotify.
//
//go:nosplit
func (p *Poller) ReqNotify(solicitedOnly bool) error {
	// No stack check (nosplit): docs/architecture.md, The data path.
	if p == nil || p.c == nil {
		return ErrClosed
	}
	c := p.c
	r := p.drv.arm
	if r == nil || !c.life.Enter() {
		return c.ReqNotify(solicitedOnly)
	}
	mmio.FencedStore64(r.ArmUAR(), r.ArmRecord(solicitedOnly))
	c.life.Leave()
	return nil
}

// Release gives the CQ's polling back: CQ.Poll is as fast as before the
// Poller, and the Poller polls no more (ErrClosed).
func (p *Poller) Release() {
	if p == nil || p.c == nil {
		return
	}
	p.c.life.Disown()
	p.c = nil
}

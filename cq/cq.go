package cq

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mmio"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
	"github.com/purerdma/purerdma/uverbs"
)

// ringLink gives uverbs the driver's CQ when a QP is created with this
// one (verbs.CQOf), without exporting it.
type ringLink = verbs.Link[provider.CQ]

// lockLink gives uverbs the CQ's lock (verbs.CQLockOf), which a QP's
// driver takes when it cleans the QP's completions out of the ring.
type lockLink = verbs.LockLink

// CQ is a completion queue. Poll, ReqNotify and Close may be called from
// several goroutines.
type CQ struct {
	// life comes first: its lock is then at the CQ's own address, which
	// the arm and the poll keep in a register anyway, rather than at an
	// offset that would be one more value to keep and spill.
	life verbs.Life

	ringLink
	lockLink
	ctx     *uverbs.Context
	core    *verbs.Context
	ch      *Channel
	handle  uint32
	cqe     atomic.Int64 // Resize changes it under the lock; CQE reads it without
	id      uint64       // user handle: names the CQ in events
	ring    provider.CQ
	drv     drivers                // ring by its concrete type, for Poll and ReqNotify (setRing)
	scratch [pollBatch]provider.WC // a driver outside drivers writes here (drainCopy), never into the caller's slice

	events atomic.Uint64 // completion events delivered for this CQ
}

// Options are the optional parts of a CQ.
type Options struct {
	// Channel receives an event when the armed CQ gets a completion.
	Channel *Channel
	// CompVector picks the completion vector (interrupt) the CQ uses.
	CompVector int
}

// New creates a CQ on the device context dev that holds at least cqe
// completions, as ibv_create_cq does. The device may round cqe up; CQE
// tells the result.
func New(dev *uverbs.Context, cqe int, opts *Options) (*CQ, error) {
	core := verbs.ContextOf(dev)
	if core == nil {
		return nil, fmt.Errorf("cq: create: nil context: %w", verbs.ErrInvalid)
	}
	if err := core.NeedDriver("cq: create"); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &Options{}
	}
	if cqe < 1 || cqe > int(^uint32(0)>>1) {
		return nil, fmt.Errorf("cq: create with %d entries: %w", cqe, verbs.ErrInvalid)
	}
	if opts.CompVector < 0 || opts.CompVector >= max(dev.NumCompVectors(), 1) {
		return nil, fmt.Errorf("cq: create: completion vector %d of %d: %w", opts.CompVector, dev.NumCompVectors(), verbs.ErrInvalid)
	}
	c := &CQ{ctx: dev, core: core, ch: opts.Channel}
	chFD := int32(-1)
	if c.ch != nil {
		if c.ch.core != core {
			return nil, fmt.Errorf("cq: create: the channel belongs to another device: %w", verbs.ErrInvalid)
		}
		fd, err := c.ch.attach()
		if err != nil {
			return nil, fmt.Errorf("cq: create: %w", err)
		}
		chFD = int32(fd)
	}
	c.id = core.Add(c, func() { c.life.Release(c.release) })
	if err := c.create(cqe, opts.CompVector, chFD); err != nil {
		core.Remove(c.id)
		if c.ch != nil {
			c.ch.detach()
		}
		return nil, err
	}
	return c, nil
}

// create runs CREATE_CQ between the two halves of the driver's create.
func (c *CQ) create(cqe, vector int, chFD int32) error {
	init := provider.CQInit{CQE: uint32(cqe)}
	in, out := c.core.Udata(abi.IB_USER_VERBS_CMD_CREATE_CQ)
	drvIn := make([]byte, in)
	pending, err := c.core.Provider.CreateCQ(&init, drvIn)
	if err != nil {
		return fmt.Errorf("cq: create with %d entries: %w", cqe, verbs.Public(err))
	}
	req := abi.CreateCQ{UserHandle: c.id, CQE: init.CQE, CompVector: uint32(vector), CompChannel: chFD}
	var resp abi.CreateCQResp
	cmd := ucmd.Cmd{
		Num:    abi.IB_USER_VERBS_CMD_CREATE_CQ,
		Req:    ucmd.Bytes(&req),
		Resp:   ucmd.Bytes(&resp),
		DrvIn:  drvIn,
		DrvOut: make([]byte, out),
	}
	if err := c.core.Do(&cmd); err != nil {
		pending.Abort()
		return fmt.Errorf("cq: create with %d entries: %w", cqe, err)
	}
	c.handle = resp.CQHandle
	init.Handle, init.Granted = resp.CQHandle, resp.CQE
	ring, err := verbs.Finish(c.core, pending, cmd.DrvOut, c.destroyCmd())
	if err != nil {
		return fmt.Errorf("cq: create: %w", err)
	}
	c.cqe.Store(int64(init.Granted)) // as the driver left it
	c.setRing(ring)
	c.ringLink = verbs.NewLink(ring)
	c.lockLink = verbs.NewLockLink(&c.life)
	return nil
}

// setRing sets the driver's CQ, which stays the CQ's until it is
// collected (Close leaves it: the driver's own Close marks it closed;
// Resize changes the driver in place), and drv, the driver by its
// concrete type: Poll and ReqNotify test a pointer rather than the
// interface's type.
func (c *CQ) setRing(ring provider.CQ) {
	c.ring = ring
	c.drv = driversOf(ring)
}

// destroyCmd is the DESTROY_CQ command for c.
func (c *CQ) destroyCmd() *ucmd.Cmd {
	req := abi.DestroyCQ{CQHandle: c.handle}
	var resp abi.DestroyCQResp
	return &ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_DESTROY_CQ, Req: ucmd.Bytes(&req), Resp: ucmd.Bytes(&resp)}
}

// Context returns the context the CQ was created on.
func (c *CQ) Context() *uverbs.Context {
	if c == nil {
		return nil
	}
	return c.ctx
}

// Handle returns the kernel's handle of the CQ; queue pairs name their CQs
// by it.
func (c *CQ) Handle() uint32 {
	if c == nil {
		return 0
	}
	return c.handle
}

// CQE returns how many completions the CQ holds.
func (c *CQ) CQE() int {
	if c == nil {
		return 0
	}
	return int(c.cqe.Load())
}

// Channel returns the CQ's completion channel, or nil.
func (c *CQ) Channel() *Channel {
	if c == nil {
		return nil
	}
	return c.ch
}

// Poll moves up to len(wc) completions, oldest first, into wc and returns
// how many it moved, as ibv_poll_cq does. It returns 0 when the CQ is
// empty. It neither blocks nor allocates.
//
//go:nosplit
func (c *CQ) Poll(wc []WC) (int, error) {
	// No stack check (nosplit): docs/architecture.md, The data path.
	if c == nil {
		return 0, ErrClosed
	}
	// The fast way in is one CAS, and a held lock or an owned CQ goes to
	// pollSlow, out of line: a call inline here, even one not taken,
	// makes the compiler keep c and wc on the stack from the start. A
	// destroyed CQ has no driver by type (closeRing), so that its closed
	// check is pollOther's, off the drivers' way. No defer: a busy-wait
	// calls Poll on an empty CQ in a loop, and nothing between the lock
	// and the unlock can panic.
	if !c.life.TryLockFree() {
		return c.pollSlow(wc)
	}
	// The drivers of this module write the completions into wc
	// themselves, reached by their concrete types (drivers). A failed
	// completion's undefined fields are cleared afterwards, when the
	// driver reports one (PollStatus): that is rare, and it keeps the
	// drivers' output what the conformance tests compare with C. Only c
	// and wc's array live across the driver's call (clearFailedN needs
	// no length: the driver's n is within wc). Poller.Poll and
	// pollLocked have the same lines: a shared function would cost a
	// call, a tenth of an empty poll. mlx5's empty CQ is answered inline
	// (Empty), without a call: its PollStatus makes calls, so its
	// prologue and frame would cost more than the test; rxe's and siw's
	// PollStatus have neither on the empty path, which they answer
	// first, and the test inline would cost as much again on every poll
	// that finds completions.
	p := unsafe.SliceData(wc)
	var n int
	var failed bool
	if r := c.drv.mlx; r != nil {
		if r.Empty() {
			c.life.UnlockFree()
			return 0, nil
		}
		n, failed = r.PollFound(driverWCs(wc))
	} else if r := c.drv.rx; r != nil {
		n, failed = r.PollStatus(driverWCs(wc))
	} else if r := c.drv.sw; r != nil {
		n, failed = r.PollStatus(driverWCs(wc))
	} else {
		n, err := c.pollOther(wc)
		c.life.UnlockFree()
		return n, err
	}
	c.life.UnlockFree()
	if failed {
		clearFailedN(p, n)
	}
	return n, nil
}

// pollOther is Poll, under the lock, for a CQ without a driver by type:
// a destroyed one, or one whose driver is reached through provider.CQ
// only.
func (c *CQ) pollOther(wc []WC) (int, error) {
	if c.life.Gone() {
		return 0, ErrClosed
	}
	return c.drainCopy(wc), nil
}

// pollSlow is Poll when the lock is held or the CQ has an owner: Lock
// waits for the holder, or shuts the owner out until Unlock.
//
//go:noinline
func (c *CQ) pollSlow(wc []WC) (int, error) {
	c.life.Lock()
	if c.life.Gone() {
		c.life.Unlock()
		return 0, ErrClosed
	}
	n, failed := c.pollLocked(wc)
	c.life.Unlock()
	if failed {
		clearFailed(wc[:n])
	}
	return n, nil
}

// pollLocked is Poll's dispatch for pollSlow, under the lock.
func (c *CQ) pollLocked(wc []WC) (n int, failed bool) {
	if r := c.drv.mlx; r != nil {
		if r.Empty() {
			return 0, false
		}
		return r.PollFound(driverWCs(wc))
	} else if r := c.drv.rx; r != nil {
		return r.PollStatus(driverWCs(wc))
	} else if r := c.drv.sw; r != nil {
		return r.PollStatus(driverWCs(wc))
	}
	return c.drainCopy(wc), false
}

// lockLive takes the CQ's lock for a call that changes it, or returns
// ErrClosed, without the lock, for a nil or destroyed CQ. (pollSlow does
// the same inline; Poll's fast way finds a destroyed CQ without a driver.)
func (c *CQ) lockLive() error {
	if c == nil {
		return ErrClosed
	}
	c.life.Lock()
	if c.life.Gone() {
		c.life.Unlock()
		return ErrClosed
	}
	return nil
}

// pollBatch is how many completions drainCopy takes from the provider in one
// call: the provider hands their slots back to the kernel once per call.
const pollBatch = 16

// clearFailedN is clearFailed of the n completions at p, the array of
// the slice the driver polled into, which it filled up to n: the fast
// paths keep the array alone across the driver's call, not its length.
//
//go:noinline
func clearFailedN(p *WC, n int) {
	clearFailed(unsafe.Slice(p, n))
}

// clearFailed clears what the failed completions among wc leave
// undefined, out of line: it is the rare case.
func clearFailed(wc []WC) {
	for i := range wc {
		if wc[i].Status != Success {
			wc[i].clearFailed()
		}
	}
}

// drainCopy is Poll's for a driver reached only through provider.CQ: it
// polls into the CQ's scratch, pollBatch at a time, and copies.
func (c *CQ) drainCopy(wc []WC) int {
	done := 0
	for done < len(wc) {
		k := min(len(wc)-done, pollBatch)
		n := c.ring.Poll(c.scratch[:k])
		for i := range n {
			wc[done+i].fill(&c.scratch[i])
		}
		done += n
		if n < k {
			break
		}
	}
	return done
}

// Resize makes the CQ hold at least cqe completions, as ibv_resize_cq
// does; CQE tells the size the device chose. Completions already in the
// CQ stay in it, in order: the kernel copies them into the new ring. The
// kernel refuses (ErrInvalid) a size below the completions the CQ holds
// now or above the device's maximum. A device without resize (siw)
// returns uverbs.ErrUnsupported (syscall.EOPNOTSUPP); rxe resizes.
func (c *CQ) Resize(cqe int) error {
	if err := c.lockLive(); err != nil {
		return err
	}
	defer c.life.Unlock()
	if cqe < 1 || cqe > int(^uint32(0)>>1) {
		return fmt.Errorf("cq: resize to %d entries: %w", cqe, verbs.ErrInvalid)
	}
	// The kernel counts and copies what lies between the consumer index
	// in the ring and its producer: slots kept by an iterator that ended
	// early go back first, or they would be copied as new completions.
	c.ring.Release()
	req := abi.ResizeCQ{CQHandle: c.handle, CQE: uint32(cqe)}
	var resp abi.ResizeCQResp
	_, out := c.core.Udata(abi.IB_USER_VERBS_CMD_RESIZE_CQ)
	cmd := ucmd.Cmd{
		Num:    abi.IB_USER_VERBS_CMD_RESIZE_CQ,
		Req:    ucmd.Bytes(&req),
		Resp:   ucmd.Bytes(&resp),
		DrvOut: make([]byte, out),
	}
	if err := c.core.Do(&cmd); err != nil {
		if errors.Is(err, syscall.EOPNOTSUPP) {
			return fmt.Errorf("cq: resize: %s cannot resize a CQ: %w", c.core.Driver.Name(), err)
		}
		return fmt.Errorf("cq: resize to %d entries: %w", cqe, err)
	}
	if err := c.ring.Resize(cmd.DrvOut); err != nil {
		return fmt.Errorf("cq: resize: %w", verbs.Public(err))
	}
	c.cqe.Store(int64(resp.CQE))
	return nil
}

// ReqNotify arms the CQ: the next completion (with solicitedOnly, the next
// solicited receive or failed completion) sends one event to the CQ's
// channel. Arm again after each event.
//
//go:nosplit
func (c *CQ) ReqNotify(solicitedOnly bool) error {
	// No stack check (nosplit): docs/architecture.md, The data path.
	if c == nil {
		return ErrClosed
	}
	// mlx5 arms in shared memory, under the lock, unlike mlx5_arm_cq
	// (docs/concurrency.md, Arming under the lock). The lock's fast way
	// in is Poll's: one CAS, a miss to notifySlow out of line. The
	// driver, reached by its concrete type and inlined, writes the
	// doorbell record; ReqNotify rings the doorbell itself, so that the
	// arm is one call deep as in C (the driver's Arm is a frame of its
	// own: the inliner prices its assembly call above the budget).
	// drv.arm is set only for a CQ with a doorbell to ring (ArmUAR not
	// nil), and closeRing clears it before the driver's Close clears the
	// UAR, both under this lock: the arm needs no nil or closed check of
	// its own; a CQ without it goes to notifyLocked, which has them. No
	// defer: the arm is a few stores, less than a deferred call, and
	// nothing under the lock panics.
	if !c.life.TryLockFree() {
		return c.notifySlow(solicitedOnly)
	}
	r := c.drv.arm
	if r == nil {
		return c.notifyLocked(solicitedOnly) // its Unlock gives back a free lock as UnlockFree does
	}
	mmio.FencedStore64(r.ArmUAR(), r.ArmRecord(solicitedOnly))
	c.life.UnlockFree()
	return nil
}

// notifySlow is ReqNotify when the lock is held or the CQ has an owner:
// Lock waits for the holder, or shuts the owner out until Unlock.
//
//go:noinline
func (c *CQ) notifySlow(solicitedOnly bool) error {
	c.life.Lock()
	r := c.drv.arm
	if r == nil {
		return c.notifyLocked(solicitedOnly)
	}
	mmio.FencedStore64(r.ArmUAR(), r.ArmRecord(solicitedOnly))
	c.life.Unlock()
	return nil
}

// notifyLocked is the rest of ReqNotify, under the lock, which it gives
// back: ErrClosed for a destroyed CQ, the driver's Arm through the
// interface, or the kernel's REQ_NOTIFY_CQ for a driver that cannot arm
// in user space.
func (c *CQ) notifyLocked(solicitedOnly bool) error {
	if c.life.Gone() {
		c.life.Unlock()
		return ErrClosed
	}
	if c.ring.Arm(solicitedOnly) {
		c.life.Unlock()
		return nil
	}
	err := c.core.FD.Notify(c.handle, solicitedOnly)
	c.life.Unlock()
	if err != nil {
		return fmt.Errorf("cq: request notification: %w", err)
	}
	return nil
}

// event counts a completion event read for the CQ, and tells a driver
// that counts them (provider.EventCounter: mlx5's arm sequence number)
// under the CQ's lock, as ibv_get_cq_event does through cq_event. A CQ
// closed meanwhile has no driver state to tell.
func (c *CQ) event() {
	c.events.Add(1)
	ec, ok := c.ring.(provider.EventCounter)
	if !ok || c.lockLive() != nil {
		return
	}
	ec.Event()
	c.life.Unlock()
}

// Events returns how many completion events the CQ's channel delivered
// for it (what ibv_ack_cq_events counts; purerdma acknowledges them as it
// delivers them).
func (c *CQ) Events() uint64 {
	if c == nil {
		return 0
	}
	return c.events.Load()
}

// Close destroys the CQ. It fails with uverbs.ErrBusy while a QP or SRQ
// uses it. It is safe to call more than once.
func (c *CQ) Close() error {
	if c == nil {
		return ErrClosed
	}
	return c.life.Destroy(c.core, "cq: destroy", c.destroyCmd(), c.release)
}

func (c *CQ) release() {
	c.core.Remove(c.id)
	c.closeRing()
	if c.ch != nil {
		c.ch.detach()
	}
}

// closeRing closes the driver's CQ, under the lock, with the CQ marked
// gone. It forgets the driver by type first: Poll, finding none, goes to
// pollOther, which says the CQ is closed, so that the drivers' way has no
// closed check of its own.
func (c *CQ) closeRing() {
	c.drv = drivers{}
	if c.ring != nil {
		c.ring.Close()
	}
}

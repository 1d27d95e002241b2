package uverbs

import (
	"fmt"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
)

type pdLink = verbs.Link[*verbs.PD]

// PD is a protection domain: memory regions and queue pairs in the same PD
// may be used together.
type PD struct {
	// pdLink gives mr the core through verbs.PDOf (see verbs.Link).
	pdLink
	ctx  *Context
	core verbs.PD
	id   uint64 // in the context's object table
}

// AllocPD allocates a protection domain.
func (c *Context) AllocPD() (*PD, error) {
	if c == nil {
		return nil, ErrClosed
	}
	var resp abi.AllocPDResp
	req := abi.AllocPD{}
	// The driver's data is sent and read back unread: mlx5's kernel
	// writes the PD number into its 4 bytes and fails without room.
	in, out := c.core.Udata(abi.IB_USER_VERBS_CMD_ALLOC_PD)
	cmd := ucmd.Cmd{
		Num:    abi.IB_USER_VERBS_CMD_ALLOC_PD,
		Req:    ucmd.Bytes(&req),
		Resp:   ucmd.Bytes(&resp),
		DrvIn:  make([]byte, in),
		DrvOut: make([]byte, out),
	}
	if err := c.do(&cmd); err != nil {
		return nil, fmt.Errorf("uverbs: alloc PD: %w", err)
	}
	pd := &PD{ctx: c, core: verbs.PD{Ctx: c.core, Handle: resp.PDHandle}}
	pd.pdLink = verbs.NewLink(&pd.core)
	pd.id = c.core.Add(pd, func() { pd.core.Release(nil) })
	return pd, nil
}

// Context returns the context the PD belongs to.
func (pd *PD) Context() *Context {
	if pd == nil {
		return nil
	}
	return pd.ctx
}

// Handle returns the kernel's handle of the PD.
func (pd *PD) Handle() uint32 {
	if pd == nil {
		return 0
	}
	return pd.core.Handle
}

// Close deallocates the PD. It fails with ErrBusy while memory regions or
// queue pairs use it. It is safe to call more than once.
func (pd *PD) Close() error {
	if pd == nil {
		return ErrClosed
	}
	req := abi.DeallocPD{PDHandle: pd.core.Handle}
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_DEALLOC_PD, Req: ucmd.Bytes(&req)}
	err := pd.core.Destroy(pd.ctx.core, "uverbs: dealloc PD", &cmd, func() { pd.ctx.core.Remove(pd.id) })
	return err
}

// queueCore is where CreateQP and CreateSRQ start: the context core their
// queue is made in, or why none can be: pd is nil or closed, or the
// device has no data-path driver (op names the call in that error).
func (pd *PD) queueCore(op string) (*verbs.Context, error) {
	if pd == nil {
		return nil, ErrClosed
	}
	if err := pd.core.Err(); err != nil {
		return nil, err
	}
	c := pd.ctx.core
	if err := c.NeedDriver(op); err != nil {
		return nil, err
	}
	return c, nil
}

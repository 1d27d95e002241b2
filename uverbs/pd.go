package uverbs

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
)

// ErrBusy is returned when an object cannot be destroyed because others
// still use it, e.g. a PD that has memory regions or queue pairs. Destroy
// those first; the object stays usable.
var ErrBusy = errors.New("uverbs: object in use")

// PD is a protection domain: memory regions and queue pairs in the same PD
// may be used together.
type PD struct {
	ctx    *Context
	handle uint32

	mu     sync.Mutex
	closed bool
}

// AllocPD allocates a protection domain.
func (c *Context) AllocPD() (*PD, error) {
	var resp abi.AllocPDResp
	req := abi.AllocPD{}
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_ALLOC_PD, Req: ucmd.Bytes(&req), Resp: ucmd.Bytes(&resp)}
	if err := c.do(&cmd); err != nil {
		return nil, fmt.Errorf("uverbs: alloc PD: %w", err)
	}
	return &PD{ctx: c, handle: resp.PDHandle}, nil
}

// Context returns the context the PD belongs to.
func (pd *PD) Context() *Context { return pd.ctx }

// Handle returns the kernel's handle of the PD.
func (pd *PD) Handle() uint32 { return pd.handle }

// Close deallocates the PD. It fails with ErrBusy while memory regions or
// queue pairs use it. It is safe to call more than once.
func (pd *PD) Close() error {
	pd.mu.Lock()
	defer pd.mu.Unlock()
	if pd.closed {
		return nil
	}
	req := abi.DeallocPD{PDHandle: pd.handle}
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_DEALLOC_PD, Req: ucmd.Bytes(&req)}
	err := pd.ctx.do(&cmd)
	switch {
	case errors.Is(err, unix.EBUSY):
		return fmt.Errorf("uverbs: dealloc PD: %w: %w", ErrBusy, err)
	case errors.Is(err, ErrClosed):
		// The context's close released the PD with everything else.
	case err != nil:
		return fmt.Errorf("uverbs: dealloc PD: %w", err)
	}
	pd.closed = true
	return nil
}

// Do runs a command on the PD's context unless the PD or the context is
// closed. It is for the packages that create objects in a PD (mr, cq).
func (pd *PD) Do(cmd *ucmd.Cmd) error {
	pd.mu.Lock()
	defer pd.mu.Unlock()
	if pd.closed {
		return ErrClosed
	}
	return pd.ctx.do(cmd)
}

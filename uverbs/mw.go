package uverbs

import (
	"fmt"
	"sync/atomic"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
)

// MWType is a memory window's type (enum ibv_mw_type).
type MWType uint8

// Memory window types. A type 2 window is bound by a WRBindMW work
// request on a QP of its PD; a type 1 window may be bound on any QP.
const (
	MWType1 MWType = 1 // IB_MW_TYPE_1
	MWType2 MWType = 2 // IB_MW_TYPE_2
)

// MW is a memory window: remote access to part of a registered region,
// granted by binding the window (a WRBindMW send work request) and taken
// back by invalidating its rkey (WRLocalInv, or the peer's
// WRSendWithInv), as ibv_alloc_mw, ibv_post_send's IBV_WR_BIND_MW and
// ibv_dealloc_mw do. rxe has memory windows; siw has none and AllocMW
// fails there with ErrUnsupported (unix.EOPNOTSUPP).
type MW struct {
	pd     *PD
	life   verbs.Life
	handle uint32
	rkey   uint32
	typ    MWType
	id     uint64 // in the context's object table
	// gone is life's closed flag for PostSend: a check through life's
	// mutex made escape analysis leak every SendWR's contents to the
	// heap, and with them the caller's SGE arrays (an allocation per
	// post in rpma's data path).
	gone atomic.Bool
}

// AllocMW allocates a memory window of type typ in the PD.
func (pd *PD) AllocMW(typ MWType) (*MW, error) {
	if pd == nil {
		return nil, ErrClosed
	}
	// A closed PD says so before its arguments are looked at.
	if err := pd.core.Err(); err != nil {
		return nil, fmt.Errorf("uverbs: alloc MW: %w", err)
	}
	if typ != MWType1 && typ != MWType2 {
		return nil, fmt.Errorf("uverbs: alloc MW of type %d: %w", typ, ErrInvalid)
	}
	in, out := pd.ctx.core.Udata(abi.IB_USER_VERBS_CMD_ALLOC_MW)
	req := abi.AllocMW{PDHandle: pd.core.Handle, MWType: uint8(typ)}
	var resp abi.AllocMWResp
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_ALLOC_MW, Req: ucmd.Bytes(&req), Resp: ucmd.Bytes(&resp),
		DrvIn: make([]byte, in), DrvOut: make([]byte, out)}
	if err := pd.core.Do(&cmd); err != nil {
		return nil, fmt.Errorf("uverbs: alloc MW of type %d: %w", typ, err)
	}
	mw := &MW{pd: pd, handle: resp.MWHandle, rkey: resp.RKey, typ: typ}
	mw.id = pd.ctx.core.Add(mw, func() { mw.life.Release(mw.setGone) })
	return mw, nil
}

// RKey returns the rkey the window was allocated with. A bind gives the
// window the rkey of its work request (SendWR.RKey; see NextRKey).
func (mw *MW) RKey() uint32 {
	if mw == nil {
		return 0
	}
	return mw.rkey
}

// Type returns the window's type.
func (mw *MW) Type() MWType {
	if mw == nil {
		return 0
	}
	return mw.typ
}

// Handle returns the kernel's handle of the window.
func (mw *MW) Handle() uint32 {
	if mw == nil {
		return 0
	}
	return mw.handle
}

// PD returns the PD the window belongs to.
func (mw *MW) PD() *PD {
	if mw == nil {
		return nil
	}
	return mw.pd
}

func (mw *MW) setGone() { mw.gone.Store(true) }

// Close deallocates the window. It is safe to call more than once.
func (mw *MW) Close() error {
	if mw == nil {
		return ErrClosed
	}
	req := abi.DeallocMW{MWHandle: mw.handle}
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_DEALLOC_MW, Req: ucmd.Bytes(&req)}
	return mw.life.Destroy(mw.pd.ctx.core, "uverbs: dealloc MW", &cmd, func() {
		mw.setGone()
		mw.pd.ctx.core.Remove(mw.id)
	})
}

// NextRKey returns rkey with its low byte, the key the consumer owns,
// advanced by one, as ibv_inc_rkey: a bind must give a window a key other
// than its current one (rxe refuses the same key).
func NextRKey(rkey uint32) uint32 {
	return rkey&^0xff | (rkey+1)&0xff
}

package mr

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
	"github.com/purerdma/purerdma/uverbs"
)

// Change says what Reregister changes (enum ibv_rereg_mr_flags).
type Change uint32

// Changes; combine them with |.
const (
	// ChangeBuffer registers other memory (address and length) under the
	// region's handle (IBV_REREG_MR_CHANGE_TRANSLATION).
	ChangeBuffer Change = 1 << 0 // IB_MR_REREG_TRANS
	// ChangePD moves the region to another PD of the same context.
	ChangePD Change = 1 << 1 // IB_MR_REREG_PD
	// ChangeAccess replaces the region's access flags.
	ChangeAccess Change = 1 << 2 // IB_MR_REREG_ACCESS
)

// Reregister changes the region in place, as ibv_rereg_mr does: its
// memory (ChangeBuffer: buf, from Alloc or Mapped), its PD (ChangePD: pd)
// and its access flags (ChangeAccess: access); the arguments change does
// not name are ignored. The keys may change: read LKey and RKey again.
//
// A device without re-registration returns uverbs.ErrUnsupported
// (syscall.EOPNOTSUPP): siw has none, and rxe (Linux 6.1, 6.12) changes the PD
// and the access flags but not the memory. On any error the region is as
// it was.
//
// Reregister must not run concurrently with the region's other methods
// (as ibv_rereg_mr must not with the use of the region it changes).
func (m *MR) Reregister(change Change, pd *uverbs.PD, buf []byte, access uverbs.Access) error {
	if m == nil {
		return uverbs.ErrClosed
	}
	m.life.Lock()
	defer m.life.Unlock()
	if m.life.Gone() {
		return uverbs.ErrClosed
	}
	if change == 0 || change&^(ChangeBuffer|ChangePD|ChangeAccess) != 0 {
		return fmt.Errorf("mr: reregister: changes %#x: %w", uint32(change), verbs.ErrInvalid)
	}
	req := abi.ReregMR{MRHandle: m.handle, Flags: uint32(change)}
	newPD, newUPD := m.pd, m.upd
	if change&ChangePD != 0 {
		if newPD = verbs.PDOf(pd); newPD == nil {
			return fmt.Errorf("mr: reregister: nil PD: %w", verbs.ErrInvalid)
		}
		if err := newPD.Err(); err != nil {
			return fmt.Errorf("mr: reregister: PD: %w", err)
		}
		if newPD.Ctx != m.pd.Ctx {
			return fmt.Errorf("mr: reregister: the PD belongs to another context: %w", verbs.ErrInvalid)
		}
		req.PDHandle, newUPD = pd.Handle(), pd
	}
	if change&ChangeAccess != 0 {
		if access&(uverbs.RemoteWrite|uverbs.RemoteAtomic) != 0 && access&uverbs.LocalWrite == 0 {
			return fmt.Errorf("mr: reregister: remote write and atomic access need LocalWrite: %w", verbs.ErrInvalid)
		}
		checkPD := m.upd
		if change&ChangePD != 0 {
			checkPD = pd
		}
		if err := checkFlushAccess(checkPD, access); err != nil {
			return fmt.Errorf("mr: reregister: %w", err)
		}
		req.AccessFlags = uint32(access)
	}
	newBuf := m.buf
	if change&ChangeBuffer != 0 {
		if len(buf) == 0 {
			return fmt.Errorf("mr: reregister: empty buffer: %w", verbs.ErrInvalid)
		}
		mappings.Lock()
		_, mp := find(base(buf), len(buf))
		if mp != nil {
			mp.regs++
		}
		mappings.Unlock()
		if mp == nil {
			return fmt.Errorf("mr: reregister: %w", ErrNotMapped)
		}
		newBuf = buf
		addr := uint64(base(buf))
		req.Start, req.Length, req.HCAVA = addr, uint64(len(buf)), addr
	}
	in, out := m.pd.Ctx.Udata(abi.IB_USER_VERBS_CMD_REREG_MR)
	var resp abi.ReregMRResp
	cmd := ucmd.Cmd{
		Num:    abi.IB_USER_VERBS_CMD_REREG_MR,
		Req:    ucmd.Bytes(&req),
		Resp:   ucmd.Bytes(&resp),
		DrvIn:  make([]byte, in),
		DrvOut: make([]byte, out),
	}
	if err := m.pd.Ctx.Do(&cmd); err != nil {
		if change&ChangeBuffer != 0 {
			release(buf)
		}
		if errors.Is(err, syscall.EOPNOTSUPP) {
			return fmt.Errorf("mr: reregister (changes %#x): %s cannot: %w", uint32(change), m.pd.Ctx.Name, err)
		}
		return fmt.Errorf("mr: reregister (changes %#x): %w", uint32(change), err)
	}
	if change&ChangeBuffer != 0 {
		release(m.buf)
	}
	m.pd, m.upd, m.buf, m.lkey, m.rkey = newPD, newUPD, newBuf, resp.LKey, resp.RKey
	return nil
}

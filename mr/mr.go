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

// MR is a registered memory region.
type MR struct {
	pd     *verbs.PD
	upd    *uverbs.PD // pd's public face, for Reregister's checks
	buf    []byte
	handle uint32
	lkey   uint32
	rkey   uint32
	id     uint64 // in the context's object table

	life verbs.Life
}

// Register registers buf with pd for the given access. buf must come from
// Alloc or Mapped (see the package documentation), and stays registered
// until Close.
func Register(pd *uverbs.PD, buf []byte, access uverbs.Access) (*MR, error) {
	if len(buf) == 0 {
		return nil, fmt.Errorf("mr: register: empty buffer: %w", verbs.ErrInvalid)
	}
	if access&(uverbs.RemoteWrite|uverbs.RemoteAtomic) != 0 && access&uverbs.LocalWrite == 0 {
		return nil, fmt.Errorf("mr: register: remote write and atomic access need LocalWrite: %w", verbs.ErrInvalid)
	}
	if err := checkFlushAccess(pd, access); err != nil {
		return nil, fmt.Errorf("mr: register: %w", err)
	}
	mappings.Lock()
	_, m := find(base(buf), len(buf))
	if m != nil {
		m.regs++
	}
	mappings.Unlock()
	if m == nil {
		return nil, fmt.Errorf("mr: register: %w", ErrNotMapped)
	}
	core := verbs.PDOf(pd)
	if core == nil {
		release(buf)
		return nil, fmt.Errorf("mr: register: nil PD: %w", verbs.ErrInvalid)
	}
	in, out := core.Ctx.Udata(abi.IB_USER_VERBS_CMD_REG_MR)
	addr := uint64(base(buf))
	req := abi.RegMR{Start: addr, Length: uint64(len(buf)), HCAVA: addr, PDHandle: pd.Handle(), AccessFlags: uint32(access)}
	var resp abi.RegMRResp
	cmd := ucmd.Cmd{
		Num:    abi.IB_USER_VERBS_CMD_REG_MR,
		Req:    ucmd.Bytes(&req),
		Resp:   ucmd.Bytes(&resp),
		DrvIn:  make([]byte, in),
		DrvOut: make([]byte, out),
	}
	if err := core.Do(&cmd); err != nil {
		release(buf)
		if errors.Is(err, syscall.ENOMEM) {
			return nil, fmt.Errorf("mr: register %d bytes: %w (is RLIMIT_MEMLOCK too low? see ulimit -l)", len(buf), err)
		}
		return nil, fmt.Errorf("mr: register %d bytes: %w", len(buf), err)
	}
	r := &MR{pd: core, upd: pd, buf: buf, handle: resp.MRHandle, lkey: resp.LKey, rkey: resp.RKey}
	r.id = core.Ctx.Add(r, func() { r.life.Release(r.release) })
	return r, nil
}

// checkFlushAccess refuses the FLUSH access flags on a device without
// that flush type, before the kernel does: Linux 6.1 says EINVAL, which
// reads like a bad argument rather than a missing feature.
func checkFlushAccess(pd *uverbs.PD, access uverbs.Access) error {
	var want uverbs.DeviceCap
	if access&uverbs.AccessFlushGlobal != 0 {
		want |= uverbs.DeviceFlushGlobal
	}
	if access&uverbs.AccessFlushPersistent != 0 {
		want |= uverbs.DeviceFlushPersistent
	}
	if want == 0 || pd == nil {
		return nil // a nil PD is refused below
	}
	if pd.Context().DeviceCapFlags()&want != want {
		return fmt.Errorf("the device has no RDMA FLUSH for access %#x (rxe has it since Linux 6.2): %w",
			uint32(access&(uverbs.AccessFlushGlobal|uverbs.AccessFlushPersistent)), uverbs.ErrUnsupported)
	}
	return nil
}

// release drops one registration of the mapping holding buf.
func release(buf []byte) {
	mappings.Lock()
	defer mappings.Unlock()
	if _, m := find(base(buf), len(buf)); m != nil {
		m.regs--
	}
}

// Bytes returns the registered memory.
func (m *MR) Bytes() []byte {
	if m == nil {
		return nil
	}
	return m.buf
}

// Addr returns the region's address as the device sees it.
func (m *MR) Addr() uint64 {
	if m == nil {
		return 0
	}
	return uint64(base(m.buf))
}

// Len returns the region's length in bytes.
func (m *MR) Len() int {
	if m == nil {
		return 0
	}
	return len(m.buf)
}

// LKey returns the local key, for scatter/gather entries.
func (m *MR) LKey() uint32 {
	if m == nil {
		return 0
	}
	return m.lkey
}

// RKey returns the remote key, for peers' RDMA reads, writes and atomics.
func (m *MR) RKey() uint32 {
	if m == nil {
		return 0
	}
	return m.rkey
}

// Close deregisters the region. It is safe to call more than once.
func (m *MR) Close() error {
	if m == nil {
		return uverbs.ErrClosed
	}
	req := abi.DeregMR{MRHandle: m.handle}
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_DEREG_MR, Req: ucmd.Bytes(&req)}
	return m.life.Destroy(m.pd.Ctx, "mr: deregister", &cmd, m.release)
}

func (m *MR) release() {
	m.pd.Ctx.Remove(m.id)
	release(m.buf)
}

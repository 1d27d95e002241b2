package mr

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/uverbs"
)

// Access says what a region allows (enum ibv_access_flags).
type Access uint32

// Access flags. Remote write and remote atomic need LocalWrite too, as in
// libibverbs.
const (
	LocalWrite   Access = abi.IB_UVERBS_ACCESS_LOCAL_WRITE
	RemoteWrite  Access = abi.IB_UVERBS_ACCESS_REMOTE_WRITE
	RemoteRead   Access = abi.IB_UVERBS_ACCESS_REMOTE_READ
	RemoteAtomic Access = abi.IB_UVERBS_ACCESS_REMOTE_ATOMIC
	ZeroBased    Access = abi.IB_UVERBS_ACCESS_ZERO_BASED
	OnDemand     Access = abi.IB_UVERBS_ACCESS_ON_DEMAND
	RelaxedOrder Access = abi.IB_UVERBS_ACCESS_RELAXED_ORDERING
)

// MR is a registered memory region.
type MR struct {
	pd     *uverbs.PD
	buf    []byte
	handle uint32
	lkey   uint32
	rkey   uint32

	mu     sync.Mutex
	closed bool
}

// regMRDriver holds each driver's REG_MR udata sizes (in, out); siw takes
// a key byte and answers with the STag.
var regMRDriver = map[uverbs.Driver][2]int{
	uverbs.DriverSIW: {8, 8}, // struct siw_ureq_reg_mr, struct siw_uresp_reg_mr
}

// Register registers buf with pd for the given access. buf must come from
// Alloc or Mapped (see the package documentation), and stays registered
// until Close.
func Register(pd *uverbs.PD, buf []byte, access Access) (*MR, error) {
	if len(buf) == 0 {
		return nil, fmt.Errorf("mr: register: empty buffer: %w", unix.EINVAL)
	}
	if access&(RemoteWrite|RemoteAtomic) != 0 && access&LocalWrite == 0 {
		return nil, fmt.Errorf("mr: register: remote write and atomic access need LocalWrite: %w", unix.EINVAL)
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
	sizes := regMRDriver[pd.Context().Device().Driver]
	addr := uint64(base(buf))
	req := abi.RegMR{Start: addr, Length: uint64(len(buf)), HCAVA: addr, PDHandle: pd.Handle(), AccessFlags: uint32(access)}
	var resp abi.RegMRResp
	cmd := ucmd.Cmd{
		Num:    abi.IB_USER_VERBS_CMD_REG_MR,
		Req:    ucmd.Bytes(&req),
		Resp:   ucmd.Bytes(&resp),
		DrvIn:  make([]byte, sizes[0]),
		DrvOut: make([]byte, sizes[1]),
	}
	if err := pd.Do(&cmd); err != nil {
		release(buf)
		if errors.Is(err, unix.ENOMEM) {
			return nil, fmt.Errorf("mr: register %d bytes: %w (is RLIMIT_MEMLOCK too low? see ulimit -l)", len(buf), err)
		}
		return nil, fmt.Errorf("mr: register %d bytes: %w", len(buf), err)
	}
	return &MR{pd: pd, buf: buf, handle: resp.MRHandle, lkey: resp.LKey, rkey: resp.RKey}, nil
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
func (m *MR) Bytes() []byte { return m.buf }

// Addr returns the region's address as the device sees it.
func (m *MR) Addr() uint64 { return uint64(base(m.buf)) }

// Len returns the region's length in bytes.
func (m *MR) Len() int { return len(m.buf) }

// LKey returns the local key, for scatter/gather entries.
func (m *MR) LKey() uint32 { return m.lkey }

// RKey returns the remote key, for peers' RDMA reads, writes and atomics.
func (m *MR) RKey() uint32 { return m.rkey }

// Close deregisters the region. It is safe to call more than once.
func (m *MR) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	req := abi.DeregMR{MRHandle: m.handle}
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_DEREG_MR, Req: ucmd.Bytes(&req)}
	// After the context closed, the kernel has released the region already.
	if err := m.pd.Do(&cmd); err != nil && !errors.Is(err, uverbs.ErrClosed) {
		return fmt.Errorf("mr: deregister: %w", err)
	}
	m.closed = true
	release(m.buf)
	return nil
}

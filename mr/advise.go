package mr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"syscall"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
	"github.com/purerdma/purerdma/uverbs"
)

// Advice is what Advise asks the device to do with registered memory
// (enum ibv_advise_mr_advice). It is for regions registered with
// uverbs.OnDemand, whose pages the device otherwise faults in at its
// first access to each, in the middle of a transfer.
type Advice uint32

// Advices.
const (
	// Prefetch faults the pages in for the device to read.
	Prefetch Advice = 0 // IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH
	// PrefetchWrite faults them in writable, as a local write or an
	// incoming RDMA write needs them.
	PrefetchWrite Advice = 1 // IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE
	// PrefetchNoFault maps for the device the pages that are resident
	// already, and faults none in.
	PrefetchNoFault Advice = 2 // IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT
)

//go:generate go run ../hack/namegen -type Advice -trimprefix IB_UVERBS_ADVISE_MR_ADVICE_ -doc "String returns the name of the IBV_ADVISE_MR_ADVICE_ constant without its prefix, e.g. \"PREFETCH_WRITE\"."

// AdviseFlags modify Advise (enum ibv_advise_mr_flag).
type AdviseFlags uint32

// Advise flags.
const (
	// AdviseFlush makes Advise return once the device has taken the
	// advice; without it the kernel may take it later, in the
	// background, and Advise reports only what it could check at once.
	AdviseFlush AdviseFlags = 1 << 0 // IB_UVERBS_ADVISE_MR_FLAG_FLUSH
)

//go:generate go run ../hack/namegen -type AdviseFlags -trimprefix IB_UVERBS_ADVISE_MR_FLAG_ -flags -doc "String returns \"FLUSH\" for AdviseFlush; anything else, 0 included, prints as AdviseFlags(N)."

// maxAdviseSGEs is the most SGEs one call carries: the attribute's length
// is 16 bits, and an SGE takes 16 bytes.
const maxAdviseSGEs = math.MaxUint16 / 16

// Advise gives the device advice about memory registered in pd, as
// ibv_advise_mr does: each SGE names bytes of a region of pd by the
// region's lkey. Regions registered with uverbs.OnDemand take it; what a
// device does with other regions is its own (mlx5 refuses them).
//
// A device without the kernel's ADVISE_MR method, or one that does not
// know the advice, returns an error matching uverbs.ErrUnsupported, and
// so errors.ErrUnsupported: siw has none, nor has rxe up to Linux 6.18
// (which pages on demand without it). Flags other than AdviseFlush and an empty list are
// uverbs.ErrInvalid, before any system call.
func Advise(pd *uverbs.PD, advice Advice, flags AdviseFlags, sges ...uverbs.SGE) error {
	core := verbs.PDOf(pd)
	if core == nil {
		return fmt.Errorf("mr: advise: nil PD: %w", verbs.ErrInvalid)
	}
	m, err := adviseMethod(core.Handle, advice, flags, sges)
	if err != nil {
		return fmt.Errorf("mr: advise %s: %w", advice, err)
	}
	if err := core.Life.Run(core.Ctx, m); err != nil {
		return fmt.Errorf("mr: advise %s, %d ranges: %w", advice, len(sges), adviseErr(err))
	}
	return nil
}

// Advise gives the device advice about n bytes at off of the region, as
// Advise does for one SGE (librpma's rpma_mr_advise). A range outside the
// region is uverbs.ErrInvalid.
func (m *MR) Advise(advice Advice, flags AdviseFlags, off, n int) error {
	if m == nil || m.pd == nil { // nil, or a zero MR: never registered
		return uverbs.ErrClosed
	}
	if err := m.life.Err(); err != nil {
		return fmt.Errorf("mr: advise: %w", err)
	}
	// n > len-off, not off+n > len: the sum of two large ints wraps.
	if off < 0 || n < 0 || off > len(m.buf) || n > len(m.buf)-off || uint64(n) > math.MaxUint32 {
		return fmt.Errorf("mr: advise: range [%d, +%d) outside a region of %d bytes: %w", off, n, len(m.buf), verbs.ErrInvalid)
	}
	sge := uverbs.SGE{Addr: m.Addr() + uint64(off), Length: uint32(n), LKey: m.lkey}
	meth, err := adviseMethod(m.pd.Handle, advice, flags, []uverbs.SGE{sge})
	if err != nil {
		return fmt.Errorf("mr: advise %s: %w", advice, err)
	}
	// Under the region's lock: its lkey is not another region's until
	// Close has deregistered it.
	if err := m.life.Run(m.pd.Ctx, meth); err != nil {
		return fmt.Errorf("mr: advise %s, %d bytes at %d: %w", advice, n, off, adviseErr(err))
	}
	return nil
}

// adviseErr says what the kernel's EPROTONOSUPPORT means here: a kernel
// without the ADVISE_MR method at all (the ioctl framework's answer for
// a method it does not know, which reads as a network protocol's error
// otherwise). A driver without advise_mr answers EOPNOTSUPP (rxe and siw
// of 6.1 and 6.12). Both are ErrUnsupported (verbs.Public).
func adviseErr(err error) error {
	if errors.Is(err, syscall.EPROTONOSUPPORT) {
		return fmt.Errorf("no ADVISE_MR method for this device: %w", err)
	}
	return err
}

// adviseMethod frames UVERBS_METHOD_ADVISE_MR, a method of the MR object
// that names the PD pd, as
// libibverbs' ibv_cmd_advise_mr does: the advice as an 8-byte constant,
// the flags as 4 bytes inline, the SGEs as an array of struct
// ib_uverbs_sge. The advice goes to the kernel unchecked: the driver
// decides which it takes.
func adviseMethod(pd uint32, advice Advice, flags AdviseFlags, sges []uverbs.SGE) (*ucmd.Method, error) {
	if flags&^AdviseFlush != 0 {
		return nil, fmt.Errorf("flags %#x: %w", uint32(flags), verbs.ErrInvalid)
	}
	if len(sges) == 0 || len(sges) > maxAdviseSGEs {
		// The kernel takes an empty list and does nothing.
		return nil, fmt.Errorf("%d ranges, want 1 to %d: %w", len(sges), maxAdviseSGEs, verbs.ErrInvalid)
	}
	list := make([]abi.SGE, len(sges))
	for i, s := range sges {
		list[i] = abi.SGE{Addr: s.Addr, Length: s.Length, LKey: s.LKey}
	}
	var f [4]byte
	binary.NativeEndian.PutUint32(f[:], uint32(flags))
	m := ucmd.NewMethod(abi.UVERBS_OBJECT_MR, abi.UVERBS_METHOD_ADVISE_MR)
	m.Handle(abi.UVERBS_ATTR_ADVISE_MR_PD_HANDLE, uint64(pd))
	m.Const(abi.UVERBS_ATTR_ADVISE_MR_ADVICE, uint64(advice))
	m.In(abi.UVERBS_ATTR_ADVISE_MR_FLAGS, f[:])
	m.In(abi.UVERBS_ATTR_ADVISE_MR_SGE_LIST, ucmd.SliceBytes(list))
	return m, nil
}

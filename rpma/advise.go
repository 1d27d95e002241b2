package rpma

import (
	"errors"
	"syscall"

	"github.com/purerdma/purerdma/mr"
)

// Advice is what Advise tells the device to do with a region
// (enum ibv_advise_mr_advice, which rpma_mr_advise takes as an int).
type Advice int

// Advices.
const (
	AdvicePrefetch        Advice = 0 // IBV_ADVISE_MR_ADVICE_PREFETCH: fault pages in for reading
	AdvicePrefetchWrite   Advice = 1 // IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE: for writing
	AdvicePrefetchNoFault Advice = 2 // IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT: map only what is resident
)

// AdviseFlags modify Advise (enum ibv_advise_mr_flag).
type AdviseFlags uint32

// AdviseFlush makes Advise wait until the advice has been carried out
// (IBV_ADVISE_MR_FLAG_FLUSH).
const AdviseFlush AdviseFlags = 1 << 0

// Advise gives the device advice about n bytes at off of the region
// (rpma_mr_advise), such as prefetching the pages of an on-demand-paging
// registration (MR.OnDemand) so that the first remote access does not
// fault: librpma 1.3's one SGE over the range, through mr.MR.Advise
// (ibv_advise_mr).
//
// A device without the kernel's ADVISE_MR method (siw; rxe up to Linux
// 6.18, ODP or not), or one that does not take the advice, returns
// ErrUnsupported (RPMA_E_NOSUPP), which matches errors.ErrUnsupported;
// callers should treat it as "no advice taken", as librpma's examples do.
// A range outside the region or an unknown flag is ErrInvalid before the
// kernel is asked, and so is the kernel's EINVAL or EFAULT (RPMA_E_INVAL:
// the region's access does not allow the advice); any other failure is
// ErrProvider.
func (m *MR) Advise(off, n int, advice Advice, flags AdviseFlags) error {
	if m == nil {
		return errNil
	}
	if m.closed.Load() {
		return closedErr("advise", nil)
	}
	if flags&^AdviseFlush != 0 {
		return inval("advise flags %#x", uint32(flags))
	}
	if _, err := m.sge(off, n); err != nil {
		return err
	}
	err := m.region.Advise(mr.Advice(advice), mr.AdviseFlags(flags), off, n)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EBADF):
		return closedErr("advise", err)
	case errors.Is(err, ErrUnsupported):
		logf(LogError, "rpma: ibv_advise_mr() is not supported", "advice", int(advice), "err", err)
		return &rpmaError{"rpma: " + err.Error(), ErrUnsupported, err}
	case errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.EFAULT):
		logf(LogError, "rpma: ibv_advise_mr() failed", "advice", int(advice), "err", err)
		return &rpmaError{"rpma: " + err.Error(), ErrInvalid, err}
	}
	return provider("advise", err)
}

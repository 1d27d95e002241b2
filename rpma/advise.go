package rpma

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
// registration so that the first remote access does not fault.
//
// purerdma has no UVERBS_METHOD_ADVISE_MR ioctl yet, so after checking
// its arguments Advise returns ErrUnsupported on every device, as librpma
// built without IBV_ADVISE_MR_SUPPORTED does (RPMA_E_NOSUPP). Callers
// should treat ErrUnsupported as "no advice taken", as librpma's examples
// do. A range outside the region or an unknown flag is ErrInvalid (the
// kernel's EFAULT and EINVAL, which librpma maps to RPMA_E_INVAL).
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
	logf(LogError, "rpma: ibv_advise_mr() is not supported", "advice", int(advice))
	return unsupported("advise %d bytes at %d (advice %d): no ADVISE_MR ioctl", n, off, advice)
}

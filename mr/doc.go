// Package mr allocates memory for RDMA and registers it with a device.
//
// Memory that a device reads and writes must stay where it is and stay
// alive while it is registered. The Go garbage collector may free a []byte
// that nothing references any more, and the runtime moves goroutine stacks,
// so purerdma does not register Go heap memory. Alloc returns memory mapped
// outside the Go heap (anonymous mmap), which neither the collector nor the
// runtime touches; Register accepts only memory from Alloc, or from a
// mapping the caller owns and declares with Mapped. Anything else is
// refused with ErrNotMapped.
//
// AllocRegister does both in one call, and its Buffer's Close undoes both
// in the order the device needs: deregister, then free. NewPool carves
// many fixed-size buffers from one such registration; Pool.Get and
// Pool.Put hand them out and take them back without allocating, and each
// PoolBuffer has its address, keys and SGE for work requests.
//
// MR.Reregister changes a region in place (ibv_rereg_mr): its memory, its
// PD or its access flags. Soft devices support little of it: rxe changes
// the PD and the access flags from a release after Linux 6.1 (6.12 does;
// 6.1 has no re-registration), never the memory; siw has none. What the
// device cannot do returns uverbs.ErrUnsupported (unix.EOPNOTSUPP).
//
// A region registered with uverbs.OnDemand (on-demand paging, on a device
// whose DeviceAttr reports ODPSupport: rxe from Linux 6.14) pins nothing:
// the device faults pages in as it touches them and lets them go when the
// kernel reclaims them (MADV_DONTNEED, swap). Advise and MR.Advise
// (ibv_advise_mr) prefetch such pages ahead of the first access; a device
// without ODP (siw, rxe before Linux 6.14)
// returns an error matching errors.ErrUnsupported.
//
// Alloc marks its memory MADV_DONTFORK, as ibv_fork_init does for
// registered memory: a forked child does not get it. The functions may be
// called from any goroutine.
//
// On operating systems other than Linux the package compiles, and every
// call that would reach the kernel returns an error matching
// errors.ErrUnsupported (and uverbs.ErrNoDevice where a device is asked
// for): Alloc fails, and no PD exists to register with.
package mr

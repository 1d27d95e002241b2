package mmio

// The barriers that are only compiler barriers on amd64 are Go functions
// here, which inline: as assembly they cost every post and poll a call,
// and the spills of what was live across it, for a RET.

// ToDevice orders every store to memory a device reads by DMA before the
// stores that follow it (a doorbell record, a doorbell register):
// rdma-core's udma_to_device_barrier. x86-TSO keeps stores to write-back
// memory in order and a device's DMA reads see them in that order; the
// compiler keeps stores in program order too (every store is chained
// after the one before it, and its scheduler keeps the chain's order), so
// there is nothing to do. It promises nothing about loads.
func ToDevice() {}

// LockedWCStart is the fence rdma-core's mmio_wc_spinlock puts after
// taking the lock that guards a shared BlueFlame register. The
// LOCK-prefixed instruction that took the lock is a full barrier for all
// memory types, and the WC stores after it are assembly calls, which the
// compiler does not move: nothing to do.
func LockedWCStart() {}

// FromDeviceAtomic is FromDevice for a caller that read the ownership
// marks with sync/atomic loads. On amd64 it is nothing: FromDevice is
// only a compiler barrier there (x86 does not reorder loads with loads),
// and an atomic load already is one for the loads after it, which the
// compiler orders after it in its memory chain (an atomic load yields a
// new memory state; a plain load does not).
func FromDeviceAtomic() {}

package mmio

// ToDevice orders every store to memory a device reads by DMA before the
// stores that follow it (a doorbell record, a doorbell register):
// rdma-core's udma_to_device_barrier.
func ToDevice()

// LockedWCStart is the fence rdma-core's mmio_wc_spinlock puts after
// taking the lock that guards a shared BlueFlame register: FlushWrites on
// arm64 (none on amd64, where the locked instruction that took the lock
// already orders the WC stores).
func LockedWCStart()

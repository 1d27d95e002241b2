//go:build !amd64

package mmio

// FromDeviceAtomic is FromDevice for a caller that read the ownership
// marks with sync/atomic loads: FromDevice here, whose barrier an
// acquire load does not replace (rdma-core's is a DMB or DSB for loads
// from DMA memory); on amd64 it is nothing.
func FromDeviceAtomic() { FromDevice() }

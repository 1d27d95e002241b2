package abi

import (
	"testing"
	"unsafe"
)

// TestRDMAVerbsIoctl checks that RDMA_VERBS_IOCTL, whose C value
// (_IOWR(RDMA_IOCTL_MAGIC, 1, struct ib_uverbs_ioctl_hdr), the same on amd64
// and arm64) TestRDMAUserIoctlCmdsConstants checks, is what ioc derives.
func TestRDMAVerbsIoctl(t *testing.T) {
	if got := unsafe.Sizeof(IoctlHdr{}); got != sizeofIoctlHdr {
		t.Errorf("sizeofIoctlHdr = %d, but IoctlHdr has %d bytes", sizeofIoctlHdr, got)
	}
	if got := ioc(iocRead|iocWrite, RDMA_IOCTL_MAGIC, 1, sizeofIoctlHdr); got != RDMA_VERBS_IOCTL {
		t.Errorf("ioc(READ|WRITE, ...) = %#x, want %#x", got, RDMA_VERBS_IOCTL)
	}
}

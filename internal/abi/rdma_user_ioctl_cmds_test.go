// Layout and constant tests for rdma_user_ioctl_cmds.h. The expected numbers in the
// tables were printed by the C compiler from the Linux 6.1 headers; do not
// compute them by hand. abi_test.go says how, and why they hold on arm64.

package abi

import (
	"testing"
	"unsafe"
)

func TestRDMAUserIoctlCmdsLayout(t *testing.T) {
	checkLayouts(t, []layout{
		{"struct ib_uverbs_attr", unsafe.Sizeof(Attr{}), 16, []offset{
			{"attr_id", unsafe.Offsetof(Attr{}.AttrID), 0},
			{"len", unsafe.Offsetof(Attr{}.Len), 2},
			{"flags", unsafe.Offsetof(Attr{}.Flags), 4},
			{"attr_data.enum_data.elem_id", unsafe.Offsetof(Attr{}.ElemID), 6},
			{"attr_data.enum_data.reserved", unsafe.Offsetof(Attr{}.AttrDataReserved), 7},
			{"data", unsafe.Offsetof(Attr{}.Data), 8},
		}},
		{"struct ib_uverbs_ioctl_hdr", unsafe.Sizeof(IoctlHdr{}), 24, []offset{
			{"length", unsafe.Offsetof(IoctlHdr{}.Length), 0},
			{"object_id", unsafe.Offsetof(IoctlHdr{}.ObjectID), 2},
			{"method_id", unsafe.Offsetof(IoctlHdr{}.MethodID), 4},
			{"num_attrs", unsafe.Offsetof(IoctlHdr{}.NumAttrs), 6},
			{"reserved1", unsafe.Offsetof(IoctlHdr{}.Reserved1), 8},
			{"driver_id", unsafe.Offsetof(IoctlHdr{}.DriverID), 16},
			{"reserved2", unsafe.Offsetof(IoctlHdr{}.Reserved2), 20},
		}},
	})
}

func TestRDMAUserIoctlCmdsConstants(t *testing.T) {
	checkConstants(t, []constant{
		{"RDMA_IOCTL_MAGIC", uint64(RDMA_IOCTL_MAGIC), 27},
		{"UVERBS_ATTR_F_MANDATORY", uint64(UVERBS_ATTR_F_MANDATORY), 1},
		{"UVERBS_ATTR_F_VALID_OUTPUT", uint64(UVERBS_ATTR_F_VALID_OUTPUT), 2},
		{"RDMA_VERBS_IOCTL", uint64(RDMA_VERBS_IOCTL), 0xc0181b01},
	})
}

// TestRDMAVerbsIoctl checks the derived ioctl number against the value of
// _IOWR(RDMA_IOCTL_MAGIC, 1, struct ib_uverbs_ioctl_hdr) on amd64 and arm64.
func TestRDMAVerbsIoctl(t *testing.T) {
	if RDMA_VERBS_IOCTL != 0xC0181B01 {
		t.Errorf("RDMA_VERBS_IOCTL = %#x, want 0xC0181B01", RDMA_VERBS_IOCTL)
	}
	if got := unsafe.Sizeof(IoctlHdr{}); got != sizeofIoctlHdr {
		t.Errorf("sizeofIoctlHdr = %d, but IoctlHdr has %d bytes", sizeofIoctlHdr, got)
	}
	if got := ioc(iocRead|iocWrite, RDMA_IOCTL_MAGIC, 1, sizeofIoctlHdr); got != RDMA_VERBS_IOCTL {
		t.Errorf("ioc(READ|WRITE, ...) = %#x, want %#x", got, RDMA_VERBS_IOCTL)
	}
}

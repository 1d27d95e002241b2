// Structs and constants from include/uapi/rdma/rdma_user_ioctl_cmds.h (Linux
// 6.1; identical to rdma-core v43's kernel-headers/rdma/).
//
// An ioctl(RDMA_VERBS_IOCTL) on /dev/infiniband/uverbsN takes an IoctlHdr
// followed by num_attrs Attr. The object, method and attribute ids are in
// ib_user_ioctl_cmds.go, and so are UVERBS_ID_NS_* and UVERBS_ATTR_UHW_*,
// which ib_user_ioctl_cmds.h defines.

package abi

// RDMA_IOCTL_MAGIC is the ioctl type of the RDMA subsystem.
const RDMA_IOCTL_MAGIC = 0x1b

// The asm-generic encoding of ioctl numbers (include/uapi/asm-generic/ioctl.h),
// which amd64 and arm64 use. (powerpc, mips and sparc use other dir bits.)
const (
	iocNRBits   = 8
	iocTypeBits = 8
	iocSizeBits = 14

	iocNRShift   = 0
	iocTypeShift = iocNRShift + iocNRBits
	iocSizeShift = iocTypeShift + iocTypeBits
	iocDirShift  = iocSizeShift + iocSizeBits

	iocWrite = 1
	iocRead  = 2
)

// ioc is the C macro _IOC.
func ioc(dir, typ, nr, size uint32) uint32 {
	return dir<<iocDirShift | typ<<iocTypeShift | nr<<iocNRShift | size<<iocSizeShift
}

// iowr is the C macro _IOWR, with the size of the argument given in bytes.
func iowr(typ, nr, size uint32) uint32 { return ioc(iocRead|iocWrite, typ, nr, size) }

// sizeofIoctlHdr is sizeof(struct ib_uverbs_ioctl_hdr); the tests check it
// against IoctlHdr and the C compiler.
const sizeofIoctlHdr = 24

// RDMA_VERBS_IOCTL is _IOWR(RDMA_IOCTL_MAGIC, 1, struct ib_uverbs_ioctl_hdr),
// 0xC0181B01. It is a variable only because Go has no constant functions;
// do not change it.
var RDMA_VERBS_IOCTL = iowr(RDMA_IOCTL_MAGIC, 1, sizeofIoctlHdr)

// Attr.Flags.
const (
	UVERBS_ATTR_F_MANDATORY    = 1 << 0 // user input: fail if the kernel does not know the attribute
	UVERBS_ATTR_F_VALID_OUTPUT = 1 << 1 // kernel output: the kernel wrote this output attribute
)

// Attr is one attribute of an ioctl command.
//
// For a PTR_IN attribute of at most 8 bytes Data holds the value itself,
// otherwise a pointer to Len bytes; for PTR_OUT it is a pointer to a buffer
// of Len bytes. For IDR and FD attributes Len is 0 and Data is the handle or
// fd (data_s64 of the C union); the kernel writes new ones back into Data.
//
// struct ib_uverbs_attr
type Attr struct {
	AttrID           uint16
	Len              uint16
	Flags            uint16 // UVERBS_ATTR_F_*
	ElemID           uint8  // attr_data.enum_data.elem_id: the member of an ENUM attribute
	AttrDataReserved uint8  // attr_data.enum_data.reserved
	Data             uint64 // union: data (__aligned_u64) or data_s64
}

// IoctlHdr starts the argument of RDMA_VERBS_IOCTL; num_attrs Attr
// (attrs[], not a Go field) follow it. Length is the size of the header and
// the attributes together. DriverID must equal the device's RDMA_DRIVER_*,
// or the kernel answers EINVAL.
//
// struct ib_uverbs_ioctl_hdr
type IoctlHdr struct {
	Length    uint16
	ObjectID  uint16 // UVERBS_OBJECT_*
	MethodID  uint16 // UVERBS_METHOD_*
	NumAttrs  uint16
	Reserved1 uint64
	DriverID  uint32 // RDMA_DRIVER_*
	Reserved2 uint32
}

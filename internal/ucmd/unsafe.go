package ucmd

import "unsafe"

// This file holds the package's unsafe code: viewing abi structs as bytes
// and passing buffer addresses to the kernel.

// bytesOf returns the memory of *p as a byte slice, without copying. T must
// be a plain abi struct (no pointers), so that its bytes are its ABI.
func bytesOf[T any](p *T) []byte {
	if p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p))
}

// addr returns the address of b's first byte as the kernel takes it in a
// u64 field, or 0 for an empty slice.
func addr(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(&b[0])))
}

// bufPtr returns b's first byte as an unsafe.Pointer for a system call.
func bufPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// Bytes returns the memory of the abi struct *p as a byte slice, without
// copying, so that a request or response can be framed in place.
func Bytes[T any](p *T) []byte { return bytesOf(p) }

// Addr returns the address of b's first byte as a kernel u64 pointer
// field takes it, or 0 for an empty slice. b must stay reachable (and so
// must be heap memory, which does not move) until the call that passes the
// address returns.
func Addr(b []byte) uint64 { return addr(b) }

// SliceBytes returns the memory of s, a slice of plain abi structs, as a
// byte slice without copying: an array attribute (an SGE list) is the
// structs back to back.
func SliceBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

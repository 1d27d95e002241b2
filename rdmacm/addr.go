package rdmacm

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
)

// The address families and sockaddr sizes of Linux's ABI, which rdma_cm
// speaks: the same numbers as golang.org/x/sys/unix's on Linux, whatever
// the GOOS of the build.
const (
	afInet              = 2  // AF_INET
	afInet6             = 10 // AF_INET6
	sizeofSockaddrInet4 = 16 // struct sockaddr_in
	sizeofSockaddrInet6 = 28 // struct sockaddr_in6
)

func putU64(b []byte, v uint64) { binary.NativeEndian.PutUint64(b, v) }

// encodeSockaddr writes ap as a struct sockaddr_in (IPv4) or
// sockaddr_in6 into b and returns its size. A zero AddrPort is an
// unspecified IPv4 address.
func encodeSockaddr(b []byte, ap netip.AddrPort) int {
	clear(b)
	a := ap.Addr()
	if !a.IsValid() {
		a = netip.IPv4Unspecified()
	}
	if a.Is4() || a.Is4In6() {
		binary.NativeEndian.PutUint16(b[0:], afInet)
		binary.BigEndian.PutUint16(b[2:], ap.Port())
		v4 := a.Unmap().As4()
		copy(b[4:8], v4[:])
		return sizeofSockaddrInet4
	}
	binary.NativeEndian.PutUint16(b[0:], afInet6)
	binary.BigEndian.PutUint16(b[2:], ap.Port())
	v6 := a.As16()
	copy(b[8:24], v6[:])
	if z := a.Zone(); z != "" {
		// A zone is an interface for link-local addresses; its index goes in
		// sin6_scope_id. Resolution fails later if it names no interface.
		if ifi, err := net.InterfaceByName(z); err == nil {
			binary.NativeEndian.PutUint32(b[24:], uint32(ifi.Index))
		}
	}
	return sizeofSockaddrInet6
}

// decodeSockaddr reads a struct sockaddr_in or sockaddr_in6.
func decodeSockaddr(b []byte) (netip.AddrPort, error) {
	if len(b) < 2 {
		return netip.AddrPort{}, fmt.Errorf("rdmacm: short sockaddr")
	}
	switch binary.NativeEndian.Uint16(b) {
	case afInet:
		if len(b) < sizeofSockaddrInet4 {
			break
		}
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:])), nil
	case afInet6:
		if len(b) < sizeofSockaddrInet6 {
			break
		}
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])), binary.BigEndian.Uint16(b[2:])), nil
	case 0:
		return netip.AddrPort{}, nil
	default:
		return netip.AddrPort{}, fmt.Errorf("rdmacm: address family %d not supported", binary.NativeEndian.Uint16(b))
	}
	return netip.AddrPort{}, fmt.Errorf("rdmacm: short sockaddr of %d bytes", len(b))
}

// storedSockaddr reads the first n bytes of a struct
// __kernel_sockaddr_storage that the kernel filled in. A size beyond the
// storage is an error, not a slice past its end.
func storedSockaddr(s *[128]byte, n uint16) (netip.AddrPort, error) {
	if int(n) > len(s) {
		return netip.AddrPort{}, fmt.Errorf("rdmacm: sockaddr of %d bytes in a %d-byte sockaddr_storage", n, len(s))
	}
	return decodeSockaddr(s[:n])
}

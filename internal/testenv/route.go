package testenv

import (
	"net"
	"net/netip"
)

// HasRoute reports whether the host's routing table has a route to addr.
// The VM's guests have no default route, so TEST-NET addresses (RFC 5737)
// are unreachable there, which error cases count on; a host with a
// default route reaches every address, and those cases do not apply. A
// UDP socket's connect looks the route up without sending anything.
func HasRoute(addr netip.Addr) bool {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, 9)))
	if err != nil {
		return false
	}
	c.Close()
	return true
}

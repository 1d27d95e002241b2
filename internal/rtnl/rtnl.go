//go:build linux

// Package rtnl is the little rtnetlink (NETLINK_ROUTE) that the test VM
// needs: veth pairs to put software RDMA devices on, link state,
// addresses, and netem qdiscs for the two-host fault tests. It is not a
// general routing library.
package rtnl

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/netlink"
)

// Conn is an rtnetlink socket.
type Conn struct {
	nl *netlink.Conn
}

// Dial opens an rtnetlink socket. Changing links needs CAP_NET_ADMIN.
func Dial() (*Conn, error) {
	nl, err := netlink.Dial(unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("rtnl: %w", err)
	}
	return &Conn{nl: nl}, nil
}

// Close closes the socket. Later calls do nothing.
func (c *Conn) Close() error { return c.nl.Close() }

// AddVeth creates a veth pair of the links name and peer, both down.
func (c *Conn) AddVeth(name, peer string) error {
	// The peer is described the way a link is in RTM_NEWLINK: an
	// ifinfomsg, then its attributes.
	pe := netlink.NewAttributeEncoder()
	pe.String(unix.IFLA_IFNAME, peer)
	peerAttrs, err := pe.Encode()
	if err != nil {
		return fmt.Errorf("rtnl: add veth %s: %w", name, err)
	}
	e := netlink.NewAttributeEncoder()
	e.String(unix.IFLA_IFNAME, name)
	e.Nested(unix.IFLA_LINKINFO, func(e *netlink.AttributeEncoder) error {
		e.String(unix.IFLA_INFO_KIND, "veth")
		e.Nested(unix.IFLA_INFO_DATA, func(e *netlink.AttributeEncoder) error {
			e.Bytes(abi.VETH_INFO_PEER, append(ifinfomsg(unix.IfInfomsg{}), peerAttrs...))
			return nil
		})
		return nil
	})
	if _, err := c.request(unix.RTM_NEWLINK, unix.NLM_F_CREATE|unix.NLM_F_EXCL, ifinfomsg(unix.IfInfomsg{}), e); err != nil {
		return fmt.Errorf("rtnl: add veth %s peer %s: %w", name, peer, err)
	}
	return nil
}

// SetUp brings the link up.
func (c *Conn) SetUp(name string) error {
	if err := c.setFlags(name, unix.IFF_UP, unix.IFF_UP); err != nil {
		return fmt.Errorf("rtnl: set %s up: %w", name, err)
	}
	return nil
}

// SetDown takes the link down.
func (c *Conn) SetDown(name string) error {
	if err := c.setFlags(name, 0, unix.IFF_UP); err != nil {
		return fmt.Errorf("rtnl: set %s down: %w", name, err)
	}
	return nil
}

// setFlags sets the interface flags selected by change to flags.
func (c *Conn) setFlags(name string, flags, change uint32) error {
	e := netlink.NewAttributeEncoder()
	e.String(unix.IFLA_IFNAME, name)
	_, err := c.request(unix.RTM_SETLINK, 0, ifinfomsg(unix.IfInfomsg{Flags: flags, Change: change}), e)
	return err
}

// DelLink deletes the link; deleting one end of a veth pair deletes both.
func (c *Conn) DelLink(name string) error {
	e := netlink.NewAttributeEncoder()
	e.String(unix.IFLA_IFNAME, name)
	if _, err := c.request(unix.RTM_DELLINK, 0, ifinfomsg(unix.IfInfomsg{}), e); err != nil {
		return fmt.Errorf("rtnl: delete link %s: %w", name, err)
	}
	return nil
}

// AddAddr adds the address prefix.Addr() with its prefix length to the
// link, as `ip addr add` does. IPv4 and IPv6 both work.
func (c *Conn) AddAddr(name string, prefix netip.Prefix) error {
	if !prefix.IsValid() {
		return fmt.Errorf("rtnl: add address to %s: invalid prefix %v", name, prefix)
	}
	index, err := c.index(name)
	if err != nil {
		return fmt.Errorf("rtnl: add address %v to %s: %w", prefix, name, err)
	}
	addr := prefix.Addr()
	family := uint8(unix.AF_INET6)
	if addr.Is4() {
		family = unix.AF_INET
	}
	e := netlink.NewAttributeEncoder()
	e.Bytes(unix.IFA_LOCAL, addr.AsSlice())
	e.Bytes(unix.IFA_ADDRESS, addr.AsSlice())
	ifa := ifaddrmsg(unix.IfAddrmsg{
		Family:    family,
		Prefixlen: uint8(prefix.Bits()),
		Scope:     unix.RT_SCOPE_UNIVERSE,
		Index:     index,
	})
	if _, err := c.request(unix.RTM_NEWADDR, unix.NLM_F_CREATE|unix.NLM_F_EXCL, ifa, e); err != nil {
		return fmt.Errorf("rtnl: add address %v to %s: %w", prefix, name, err)
	}
	return nil
}

// index asks the kernel for the link's interface index. RTM_NEWADDR names
// the link only by index.
func (c *Conn) index(name string) (uint32, error) {
	e := netlink.NewAttributeEncoder()
	e.String(unix.IFLA_IFNAME, name)
	replies, err := c.request(unix.RTM_GETLINK, 0, ifinfomsg(unix.IfInfomsg{}), e)
	if err != nil {
		return 0, err
	}
	for _, m := range replies {
		if m.Header.Type == unix.RTM_NEWLINK && len(m.Data) >= unix.SizeofIfInfomsg {
			if i := int32(binary.NativeEndian.Uint32(m.Data[4:])); i > 0 {
				return uint32(i), nil
			}
		}
	}
	return 0, fmt.Errorf("no index for link %s in the kernel's reply", name)
}

// request sends an rtnetlink message: a fixed header (ifinfomsg,
// ifaddrmsg) followed by attributes.
func (c *Conn) request(typ, flags uint16, hdr []byte, e *netlink.AttributeEncoder) ([]netlink.Message, error) {
	attrs, err := e.Encode()
	if err != nil {
		return nil, err
	}
	return c.nl.Execute(netlink.Message{
		Header: unix.NlMsghdr{Type: typ, Flags: flags},
		Data:   append(hdr, attrs...),
	})
}

// ifinfomsg encodes struct ifinfomsg.
func ifinfomsg(m unix.IfInfomsg) []byte {
	b := make([]byte, unix.SizeofIfInfomsg)
	b[0] = m.Family
	binary.NativeEndian.PutUint16(b[2:], m.Type)
	binary.NativeEndian.PutUint32(b[4:], uint32(m.Index))
	binary.NativeEndian.PutUint32(b[8:], m.Flags)
	binary.NativeEndian.PutUint32(b[12:], m.Change)
	return b
}

// ifaddrmsg encodes struct ifaddrmsg.
func ifaddrmsg(m unix.IfAddrmsg) []byte {
	b := make([]byte, unix.SizeofIfAddrmsg)
	b[0] = m.Family
	b[1] = m.Prefixlen
	b[2] = m.Flags
	b[3] = m.Scope
	binary.NativeEndian.PutUint32(b[4:], m.Index)
	return b
}

// SetLink sets the network device name up or down on a connection of its
// own, for the link-down fault tests.
func SetLink(name string, up bool) error {
	c, err := Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	if up {
		return c.SetUp(name)
	}
	return c.SetDown(name)
}

//go:build !purerdma_stub

package rdmanl

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/netlink"
)

// Conn is an RDMA netlink socket.
type Conn struct {
	nl *netlink.Conn
}

// Dial opens an RDMA netlink socket. It fails when the kernel has no RDMA
// core (ib_core not loaded). Adding and deleting links needs CAP_NET_ADMIN.
func Dial() (*Conn, error) {
	nl, err := netlink.Dial(unix.NETLINK_RDMA)
	if errors.Is(err, unix.EPROTONOSUPPORT) {
		// The family exists once ib_core is loaded: a host with no
		// RDMA driver at all (or a container without it) says this.
		return nil, fmt.Errorf("rdmanl: the kernel has no RDMA netlink, so no RDMA driver is loaded (modprobe ib_core and the device's driver, e.g. mlx5_ib or rdma_rxe): %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("rdmanl: %w", err)
	}
	return &Conn{nl: nl}, nil
}

// Close closes the socket. Later calls do nothing.
func (c *Conn) Close() error { return c.nl.Close() }

// Devices lists the RDMA devices.
//
// The kernel dumps the devices one per message and resumes the dump by
// position among the registered devices (nldev.c, _nldev_get_dumpit's
// cb->args[0] and ib_enum_all_devs), so a device unregistered during a
// dump, before the position reached, makes the dump skip the device after
// it: the soak, deleting one device while the other worker looked its own
// up, once got a list without it. Devices therefore dumps until two dumps
// in a row list the same devices (at most four dumps).
func (c *Conn) Devices() ([]Device, error) {
	return agreed(c.dumpDevices)
}

// agreed calls dump until two calls in a row return the same device
// indexes, at most four times, and returns the last list.
func agreed(dump func() ([]Device, error)) ([]Device, error) {
	prev, err := dump()
	if err != nil {
		return nil, err
	}
	for range 3 {
		cur, err := dump()
		if err != nil {
			return nil, err
		}
		if sameIndexes(prev, cur) {
			return cur, nil
		}
		prev = cur
	}
	return prev, nil
}

func sameIndexes(a, b []Device) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Index != b[i].Index {
			return false
		}
	}
	return true
}

// dumpDevices lists the devices in one dump.
func (c *Conn) dumpDevices() ([]Device, error) {
	msgs, err := c.request(abi.RDMA_NLDEV_CMD_GET, unix.NLM_F_DUMP, nil)
	if err != nil {
		return nil, fmt.Errorf("rdmanl: list devices: %w", err)
	}
	devs := make([]Device, 0, len(msgs))
	for _, m := range msgs {
		d, err := parseDevice(m.Data)
		if err != nil {
			return nil, fmt.Errorf("rdmanl: list devices: %w", err)
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// DeviceByName returns the device called name. The error wraps
// ErrNotFound if there is none.
func (c *Conn) DeviceByName(name string) (Device, error) {
	// RDMA_NLDEV_CMD_GET without a dump wants an index, so search the
	// list, as iproute2 does.
	devs, err := c.Devices()
	if err != nil {
		return Device{}, err
	}
	for _, d := range devs {
		if d.Name == name {
			return d, nil
		}
	}
	return Device{}, fmt.Errorf("rdmanl: %s: %w", name, ErrNotFound)
}

// Ports lists the ports of all RDMA devices.
func (c *Conn) Ports() ([]Port, error) {
	// The kernel dumps the ports of one device at a time, so walk the
	// devices, as iproute2 does.
	devs, err := c.Devices()
	if err != nil {
		return nil, err
	}
	var ports []Port
	for _, d := range devs {
		ps, err := c.devicePorts(d.Index)
		if errors.Is(err, unix.EINVAL) && c.gone(d.Index) {
			// Deleted since we listed it: the kernel says EINVAL
			// for an unknown index.
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("rdmanl: list ports of %s: %w", d.Name, err)
		}
		ports = append(ports, ps...)
	}
	return ports, nil
}

// devicePorts dumps the ports of the device with the given index.
func (c *Conn) devicePorts(index uint32) ([]Port, error) {
	e := netlink.NewAttributeEncoder()
	e.Uint32(abi.RDMA_NLDEV_ATTR_DEV_INDEX, index)
	msgs, err := c.request(abi.RDMA_NLDEV_CMD_PORT_GET, unix.NLM_F_DUMP, e)
	if err != nil {
		return nil, err
	}
	ports := make([]Port, 0, len(msgs))
	for _, m := range msgs {
		p, err := parsePort(m.Data)
		if err != nil {
			return nil, err
		}
		ports = append(ports, p)
	}
	return ports, nil
}

// gone reports whether the device with the given index has disappeared.
func (c *Conn) gone(index uint32) bool {
	devs, err := c.Devices()
	if err != nil {
		return false
	}
	for _, d := range devs {
		if d.Index == index {
			return false
		}
	}
	return true
}

// Chardev returns the character device of type typ ("uverbs", "umad")
// for the device with index devIndex. The kernel answers ENOENT (matchable
// with errors.Is) when the device has no such character device.
func (c *Conn) Chardev(devIndex uint32, typ string) (Chardev, error) {
	cd, err := c.chardev(devIndex, typ)
	if err != nil {
		return Chardev{}, fmt.Errorf("rdmanl: %s char device of device %d: %w", typ, devIndex, err)
	}
	return cd, nil
}

func (c *Conn) chardev(devIndex uint32, typ string) (Chardev, error) {
	e := netlink.NewAttributeEncoder()
	e.Uint32(abi.RDMA_NLDEV_ATTR_DEV_INDEX, devIndex)
	e.String(abi.RDMA_NLDEV_ATTR_CHARDEV_TYPE, typ)
	msgs, err := c.request(abi.RDMA_NLDEV_CMD_GET_CHARDEV, 0, e)
	if err != nil {
		return Chardev{}, err
	}
	if len(msgs) != 1 {
		return Chardev{}, fmt.Errorf("%d replies, want 1", len(msgs))
	}
	return parseChardev(msgs[0].Data)
}

// LinkAdd creates a software RDMA device called name of the given link type
// ("rxe", "siw") on the network device netdev, as `rdma link add NAME type
// TYPE netdev NETDEV` does.
func (c *Conn) LinkAdd(name, linkType, netdev string) error {
	e := netlink.NewAttributeEncoder()
	e.String(abi.RDMA_NLDEV_ATTR_DEV_NAME, name)
	e.String(abi.RDMA_NLDEV_ATTR_LINK_TYPE, linkType)
	e.String(abi.RDMA_NLDEV_ATTR_NDEV_NAME, netdev)
	if _, err := c.request(abi.RDMA_NLDEV_CMD_NEWLINK, 0, e); err != nil {
		return fmt.Errorf("rdmanl: link add %s type %s netdev %s: %w", name, linkType, netdev, err)
	}
	return nil
}

// LinkDel deletes the software RDMA device called name, as `rdma link
// delete NAME` does.
func (c *Conn) LinkDel(name string) error {
	d, err := c.DeviceByName(name)
	if err != nil {
		return err
	}
	e := netlink.NewAttributeEncoder()
	e.Uint32(abi.RDMA_NLDEV_ATTR_DEV_INDEX, d.Index)
	if _, err := c.request(abi.RDMA_NLDEV_CMD_DELLINK, 0, e); err != nil {
		return fmt.Errorf("rdmanl: link delete %s: %w", name, err)
	}
	return nil
}

// request sends an RDMA_NL_NLDEV command with the attributes of e, which
// may be nil.
func (c *Conn) request(cmd, flags uint16, e *netlink.AttributeEncoder) ([]netlink.Message, error) {
	var attrs []byte
	if e != nil {
		var err error
		if attrs, err = e.Encode(); err != nil {
			return nil, err
		}
	}
	return c.nl.Execute(netlink.Message{
		Header: unix.NlMsghdr{Type: abi.RDMA_NL_GET_TYPE(abi.RDMA_NL_NLDEV, cmd), Flags: flags},
		Data:   attrs,
	})
}

// Package rdmanl speaks RDMA netlink (NETLINK_RDMA): it lists devices and
// ports, finds a device's uverbs character device, and adds and deletes
// software RDMA links (rxe, siw) as iproute2's `rdma link` does.
//
// RDMA netlink has no generic netlink header: the attributes follow the
// nlmsghdr directly, and the message type is
// RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, command).
package rdmanl

import "errors"

// ErrNotFound is wrapped by errors for a device name the kernel does not
// know.
var ErrNotFound = errors.New("RDMA device not found")

// Device is an RDMA device as RDMA_NLDEV_CMD_GET describes it.
type Device struct {
	Index uint32
	Name  string
	// NodeGUID is the GUID as the kernel reports it: a number in host
	// byte order, whose most significant byte is the GUID's first.
	NodeGUID     uint64
	SysImageGUID uint64 // in the same form as NodeGUID
	FWVersion    string // "" when the driver reports none
	NodeType     uint8  // enum rdma_node_type: 1 CA, 4 RNIC, ...
	// Protocol is the first port's protocol, e.g. "roce" or "iw"; "" if
	// the kernel did not say.
	Protocol string
	Ports    uint32 // number of ports
}

// Port is a port of an RDMA device, a "link" in iproute2's words, as
// RDMA_NLDEV_CMD_PORT_GET describes it.
type Port struct {
	DevIndex uint32
	DevName  string
	Port     uint32 // from 1
	// State is enum ib_port_state: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE,
	// 5 ACTIVE_DEFER.
	State uint8
	// PhysState is enum ib_port_phys_state: 1 SLEEP, 2 POLLING,
	// 3 DISABLED, 4 PORT_CONFIGURATION_TRAINING, 5 LINK_UP,
	// 6 LINK_ERROR_RECOVERY, 7 PHY_TEST.
	PhysState   uint8
	NetdevName  string // the network device under a RoCE or iWARP port, "" if none
	NetdevIndex uint32
}

// Chardev is a character device through which user space reaches a device,
// as RDMA_NLDEV_CMD_GET_CHARDEV describes it.
type Chardev struct {
	Name         string // e.g. "uverbs0", in /dev/infiniband
	ABI          uint64 // ABI version of the interface
	Major, Minor uint32
	// DriverID is enum rdma_driver_id (abi.RDMA_DRIVER_*) for uverbs
	// devices, 0 when the kernel does not say.
	DriverID uint32
}

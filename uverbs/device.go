package uverbs

import (
	"fmt"
	"path/filepath"

	"github.com/purerdma/purerdma/internal/provider/drivers"
)

// Device is an RDMA device as the kernel lists it, before it is opened.
type Device struct {
	Name       string   // kernel device name, e.g. "rxe0"
	Index      uint32   // kernel device index (RDMA netlink); 0 when found through sysfs
	NodeGUID   GUID     // node GUID
	NodeType   NodeType // CA for InfiniBand and RoCE, RNIC for iWARP
	FWVersion  string   // firmware version, as the driver reports it
	Driver     Driver   // the driver that owns the device
	Char       string   // uverbs character device name, e.g. "uverbs0"
	ABIVersion uint32   // the driver's uverbs ABI version
}

// Path returns the character device that Open uses, e.g.
// "/dev/infiniband/uverbs0".
func (d Device) Path() string { return filepath.Join(devDir, d.Char) }

// GUID is a 64-bit InfiniBand global identifier, held so that the first
// byte on the wire is the most significant.
type GUID uint64

// String formats g as sysfs and ibv_devices do: four groups of four hex
// digits.
func (g GUID) String() string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", uint16(g>>48), uint16(g>>32), uint16(g>>16), uint16(g))
}

// NodeType is the kind of node a device is (enum rdma_node_type).
type NodeType uint8

// Node types, as sysfs node_type numbers them.
const (
	NodeCA      NodeType = 1
	NodeSwitch  NodeType = 2
	NodeRouter  NodeType = 3
	NodeRNIC    NodeType = 4
	NodeUSNIC   NodeType = 5
	NodeUSNICUD NodeType = 6
	NodeUnspec  NodeType = 7
)

// nodeTypeNames are the texts of the kernel's sysfs node_type after the
// number ("1: CA"), kept by hand: they are no C constant names.
var nodeTypeNames = map[NodeType]string{
	NodeCA: "CA", NodeSwitch: "switch", NodeRouter: "router", NodeRNIC: "RNIC",
	NodeUSNIC: "usNIC", NodeUSNICUD: "usNIC UDP", NodeUnspec: "unspecified",
}

// String returns the node type's name, e.g. "CA" or "RNIC".
func (n NodeType) String() string {
	if s, ok := nodeTypeNames[n]; ok {
		return s
	}
	return fmt.Sprintf("NodeType(%d)", uint8(n))
}

// DeviceByName returns the device called name, or an error matching
// ErrNoDevice.
func DeviceByName(name string) (Device, error) {
	devs, err := Devices()
	if err != nil {
		return Device{}, err
	}
	for _, d := range devs {
		if d.Name == name {
			return d, nil
		}
	}
	return Device{}, fmt.Errorf("uverbs: device %q: %w", name, ErrNoDevice)
}

// driverFromName guesses the driver from a device name the way libibverbs
// matches software providers when netlink cannot say: by prefix.
func driverFromName(name string) Driver { return Driver(drivers.FromDeviceName(name)) }

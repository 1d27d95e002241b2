package uverbs

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/purerdma/purerdma/internal/rdmanl"
)

// netlinkDevices lists devices over RDMA netlink, which, unlike sysfs,
// names each device's driver. Devices without a uverbs character device
// (kernel-only drivers) are left out, since user space cannot open them.
func netlinkDevices() ([]Device, error) {
	c, err := rdmanl.Dial()
	if err != nil {
		return nil, fmt.Errorf("uverbs: RDMA netlink: %w", err)
	}
	defer c.Close()
	nl, err := c.Devices()
	if err != nil {
		return nil, fmt.Errorf("uverbs: RDMA netlink: %w", err)
	}
	var devs []Device
	for _, n := range nl {
		cd, err := c.Chardev(n.Index, "uverbs")
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.EOPNOTSUPP) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("uverbs: %s: uverbs char device: %w", n.Name, err)
		}
		devs = append(devs, Device{
			Name:       n.Name,
			Index:      n.Index,
			NodeGUID:   GUID(n.NodeGUID),
			NodeType:   NodeType(n.NodeType),
			FWVersion:  n.FWVersion,
			Driver:     Driver(cd.DriverID),
			Char:       cd.Name,
			ABIVersion: uint32(cd.ABI),
		})
	}
	return devs, nil
}

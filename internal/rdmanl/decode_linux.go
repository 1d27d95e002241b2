//go:build !purerdma_stub

package rdmanl

import (
	"fmt"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/netlink"
)

// Attributes the decoders do not know, such as the padding before u64
// values on some architectures, are skipped.

func parseDevice(b []byte) (Device, error) {
	var d Device
	ad := netlink.NewAttributeDecoder(b)
	for ad.Next() {
		switch ad.Type() {
		case abi.RDMA_NLDEV_ATTR_DEV_INDEX:
			d.Index = ad.Uint32()
		case abi.RDMA_NLDEV_ATTR_DEV_NAME:
			d.Name = ad.String()
		case abi.RDMA_NLDEV_ATTR_PORT_INDEX:
			d.Ports = ad.Uint32()
		case abi.RDMA_NLDEV_ATTR_FW_VERSION:
			d.FWVersion = ad.String()
		case abi.RDMA_NLDEV_ATTR_NODE_GUID:
			d.NodeGUID = ad.Uint64()
		case abi.RDMA_NLDEV_ATTR_SYS_IMAGE_GUID:
			d.SysImageGUID = ad.Uint64()
		case abi.RDMA_NLDEV_ATTR_DEV_NODE_TYPE:
			d.NodeType = ad.Uint8()
		case abi.RDMA_NLDEV_ATTR_DEV_PROTOCOL:
			d.Protocol = ad.String()
		}
	}
	if err := ad.Err(); err != nil {
		return Device{}, fmt.Errorf("device %q: %w", d.Name, err)
	}
	return d, nil
}

func parsePort(b []byte) (Port, error) {
	var p Port
	ad := netlink.NewAttributeDecoder(b)
	for ad.Next() {
		switch ad.Type() {
		case abi.RDMA_NLDEV_ATTR_DEV_INDEX:
			p.DevIndex = ad.Uint32()
		case abi.RDMA_NLDEV_ATTR_DEV_NAME:
			p.DevName = ad.String()
		case abi.RDMA_NLDEV_ATTR_PORT_INDEX:
			p.Port = ad.Uint32()
		case abi.RDMA_NLDEV_ATTR_PORT_STATE:
			p.State = ad.Uint8()
		case abi.RDMA_NLDEV_ATTR_PORT_PHYS_STATE:
			p.PhysState = ad.Uint8()
		case abi.RDMA_NLDEV_ATTR_NDEV_INDEX:
			p.NetdevIndex = ad.Uint32()
		case abi.RDMA_NLDEV_ATTR_NDEV_NAME:
			p.NetdevName = ad.String()
		}
	}
	if err := ad.Err(); err != nil {
		return Port{}, fmt.Errorf("port %s/%d: %w", p.DevName, p.Port, err)
	}
	return p, nil
}

func parseChardev(b []byte) (Chardev, error) {
	var cd Chardev
	ad := netlink.NewAttributeDecoder(b)
	for ad.Next() {
		switch ad.Type() {
		case abi.RDMA_NLDEV_ATTR_CHARDEV_NAME:
			cd.Name = ad.String()
		case abi.RDMA_NLDEV_ATTR_CHARDEV_ABI:
			cd.ABI = ad.Uint64()
		case abi.RDMA_NLDEV_ATTR_CHARDEV:
			cd.Major, cd.Minor = decodeDev(ad.Uint64())
		case abi.RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID:
			// The uapi header documents a u64, but the kernel puts
			// a u32; accept both.
			if ad.Len() == 4 {
				cd.DriverID = ad.Uint32()
			} else {
				cd.DriverID = uint32(ad.Uint64())
			}
		}
	}
	if err := ad.Err(); err != nil {
		return Chardev{}, err
	}
	return cd, nil
}

// decodeDev splits a dev_t in the kernel's huge_encode_dev form, 12 bits
// of major and 20 of minor with the minor's low byte at the bottom, as the
// kernel's new_decode_dev does.
func decodeDev(v uint64) (major, minor uint32) {
	return uint32((v & 0xfff00) >> 8), uint32((v & 0xff) | ((v >> 12) & 0xfff00))
}

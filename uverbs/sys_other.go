//go:build !linux || purerdma_stub

package uverbs

import "github.com/purerdma/purerdma/internal/unsupported"

// Devices lists the RDMA devices (sys_linux.go); without the Linux kernel
// there are none, and the error matches ErrNoDevice as well as
// errors.ErrUnsupported.
func Devices() ([]Device, error) { return nil, unsupported.Error("list RDMA devices", ErrNoDevice) }

// Open opens dev; without the Linux kernel it fails as Devices does.
func Open(dev Device) (*Context, error) {
	return nil, unsupported.Error("open RDMA device "+dev.Name, ErrNoDevice)
}

// PortCounters returns the counters of the device's port, which sysfs
// holds on Linux; elsewhere it fails.
func (d Device) PortCounters(port int) ([]Counter, error) {
	return nil, unsupported.Error("port counters of "+d.Name, ErrNoDevice)
}

//go:build !linux || purerdma_stub

package rdmanl

import "github.com/purerdma/purerdma/internal/unsupported"

// errNetlink is every call's error here: RDMA netlink is Linux's.
var errNetlink = unsupported.Error("RDMA netlink")

// Conn is an RDMA netlink socket (conn_linux.go). Without the Linux kernel
// Dial fails, and so do the methods of a Conn made by hand.
type Conn struct{}

// Dial opens an RDMA netlink socket; without the Linux kernel it fails.
func Dial() (*Conn, error) { return nil, errNetlink }

// Close does nothing.
func (c *Conn) Close() error { return nil }

func (c *Conn) Devices() ([]Device, error)                           { return nil, errNetlink }
func (c *Conn) DeviceByName(name string) (Device, error)             { return Device{}, errNetlink }
func (c *Conn) Ports() ([]Port, error)                               { return nil, errNetlink }
func (c *Conn) Chardev(devIndex uint32, typ string) (Chardev, error) { return Chardev{}, errNetlink }
func (c *Conn) LinkAdd(name, linkType, netdev string) error          { return errNetlink }
func (c *Conn) LinkDel(name string) error                            { return errNetlink }
func (c *Conn) ResourceSummary(devIndex uint32) (ResourceSummary, error) {
	return ResourceSummary{}, errNetlink
}
func (c *Conn) ResourceSummaries() ([]ResourceSummary, error) { return nil, errNetlink }

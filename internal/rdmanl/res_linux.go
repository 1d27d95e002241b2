//go:build !purerdma_stub

package rdmanl

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/netlink"
)

// ResourceSummary returns the resource summary of the device with index
// devIndex, as `rdma resource show DEV` does. The kernel answers EINVAL
// (matchable with errors.Is) for an index it does not know.
func (c *Conn) ResourceSummary(devIndex uint32) (ResourceSummary, error) {
	e := netlink.NewAttributeEncoder()
	e.Uint32(abi.RDMA_NLDEV_ATTR_DEV_INDEX, devIndex)
	msgs, err := c.request(abi.RDMA_NLDEV_CMD_RES_GET, 0, e)
	if err != nil {
		return ResourceSummary{}, fmt.Errorf("rdmanl: resources of device %d: %w", devIndex, err)
	}
	if len(msgs) != 1 {
		return ResourceSummary{}, fmt.Errorf("rdmanl: resources of device %d: %d replies, want 1", devIndex, len(msgs))
	}
	s, err := parseResourceSummary(msgs[0].Data)
	if err != nil {
		return ResourceSummary{}, fmt.Errorf("rdmanl: resources of device %d: %w", devIndex, err)
	}
	return s, nil
}

// ResourceSummaries returns the resource summary of every device, as
// `rdma resource show` does, in one dump.
func (c *Conn) ResourceSummaries() ([]ResourceSummary, error) {
	msgs, err := c.request(abi.RDMA_NLDEV_CMD_RES_GET, unix.NLM_F_DUMP, nil)
	if err != nil {
		return nil, fmt.Errorf("rdmanl: list resources: %w", err)
	}
	sums := make([]ResourceSummary, 0, len(msgs))
	for _, m := range msgs {
		s, err := parseResourceSummary(m.Data)
		if err != nil {
			return nil, fmt.Errorf("rdmanl: list resources: %w", err)
		}
		sums = append(sums, s)
	}
	return sums, nil
}

// parseResourceSummary decodes what nldev.c's fill_res_info puts: the
// device's index and name, then RES_SUMMARY holding one RES_SUMMARY_ENTRY
// per resource kind. Like iproute2, it rejects an entry without a name or
// a count, and a reply without the table.
func parseResourceSummary(b []byte) (ResourceSummary, error) {
	var (
		s     ResourceSummary
		table bool
	)
	ad := netlink.NewAttributeDecoder(b)
	for ad.Next() {
		switch ad.Type() {
		case abi.RDMA_NLDEV_ATTR_DEV_INDEX:
			s.DevIndex = ad.Uint32()
		case abi.RDMA_NLDEV_ATTR_DEV_NAME:
			s.DevName = ad.String()
		case abi.RDMA_NLDEV_ATTR_RES_SUMMARY:
			table = true
			ad.Nested(func(td *netlink.AttributeDecoder) error {
				for td.Next() {
					if td.Type() != abi.RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY {
						continue
					}
					var (
						r          Resource
						name, curr bool
					)
					td.Nested(func(ed *netlink.AttributeDecoder) error {
						for ed.Next() {
							switch ed.Type() {
							case abi.RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME:
								r.Name, name = ed.String(), true
							case abi.RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR:
								r.Count, curr = ed.Uint64(), true
							}
						}
						if ed.Err() == nil && (!name || !curr) {
							return fmt.Errorf("summary entry %q lacks a name or a count", r.Name)
						}
						return nil
					})
					if td.Err() != nil {
						return td.Err()
					}
					s.Resources = append(s.Resources, r)
				}
				return nil
			})
		}
	}
	if err := ad.Err(); err != nil {
		return ResourceSummary{}, fmt.Errorf("device %q: %w", s.DevName, err)
	}
	if !table {
		return ResourceSummary{}, fmt.Errorf("device %q: %w", s.DevName, errNoSummary)
	}
	return s, nil
}

var errNoSummary = errors.New("reply has no RDMA_NLDEV_ATTR_RES_SUMMARY")

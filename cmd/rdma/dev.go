package main

import (
	"fmt"

	"github.com/purerdma/purerdma/internal/rdmanl"
)

func (t *tool) dev(args []string) error {
	return dispatch("dev command", args, t.devShow,
		command{"show", t.devShow},
		command{"list", t.devShow},
		command{"help", t.help},
	)
}

// devShow prints all devices, or the one named in args.
func (t *tool) devShow(args []string) error {
	return showNamed(t, args, func(c conn) ([]rdmanl.Device, error) { return c.Devices() },
		func(d rdmanl.Device) string { return d.Name }, formatDevice)
}

// showNamed prints the items list returns, one line each, or only those
// of the device named in args (an error when there is none), as
// iproute2's `rdma <object> show [DEV]` does.
func showNamed[T any](t *tool, args []string, list func(conn) ([]T, error), name func(T) string, format func(T) string) error {
	var want string
	if len(args) > 0 {
		want, args = args[0], args[1:]
	}
	if err := noMore(args); err != nil {
		return err
	}
	return t.withConn(func(c conn) error {
		items, err := list(c)
		if err != nil {
			return err
		}
		found := false
		for _, it := range items {
			if want != "" && name(it) != want {
				continue
			}
			found = true
			if _, err := fmt.Fprintln(t.w, format(it)); err != nil {
				return err
			}
		}
		if want != "" && !found {
			return fmt.Errorf("%s: %w", want, rdmanl.ErrNotFound)
		}
		return nil
	})
}

// formatDevice formats d as iproute2's `rdma dev show` does:
//
//	0: rxe0: node_type ca protocol roce node_guid 5054:00ff:fe12:3456 sys_image_guid 5054:00ff:fe12:3456
func formatDevice(d rdmanl.Device) string {
	s := fmt.Sprintf("%d: %s: node_type %s", d.Index, d.Name, nodeTypeName(d.NodeType))
	if d.Protocol != "" {
		s += " protocol " + d.Protocol
	}
	if d.FWVersion != "" {
		s += " fw " + d.FWVersion
	}
	return s + " node_guid " + formatGUID(d.NodeGUID) + " sys_image_guid " + formatGUID(d.SysImageGUID)
}

// formatGUID writes a GUID, which the kernel reports as a number whose most
// significant byte is the GUID's first, in four groups of 16 bits.
func formatGUID(g uint64) string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", g>>48, g>>32&0xffff, g>>16&0xffff, g&0xffff)
}

// nodeTypeName names enum rdma_node_type as iproute2 does.
func nodeTypeName(t uint8) string {
	names := []string{"unknown", "ca", "switch", "router", "rnic", "usnic", "usnic_udp", "unspecified"}
	if int(t) < len(names) {
		return names[t]
	}
	return "unknown"
}

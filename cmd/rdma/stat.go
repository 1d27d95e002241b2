package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/purerdma/purerdma/internal/rdmanl"
)

func (t *tool) stat(args []string) error {
	return dispatch("statistic command", args, t.statShow,
		command{"show", t.statShow},
		command{"list", t.statShow},
		command{"help", t.help},
	)
}

// statShow prints the counters of every port, of one device's (link DEV)
// or of one port (link DEV/PORT), in the manner of iproute2's `rdma
// statistic show [link DEV[/PORT]]`: "link DEV/PORT" then each counter's
// name and value. iproute2 asks the kernel over netlink (STAT_GET) and
// prints the driver's order; we read sysfs, where the order is by name.
// A port without counters (siw's) is a bare "link DEV/PORT" line, where
// iproute2 fails with the kernel's EINVAL.
func (t *tool) statShow(args []string) error {
	var dev, port string
	if len(args) > 0 {
		if !matches(args[0], "link") || len(args) < 2 {
			return fmt.Errorf("usage: rdma statistic show [link DEV[/PORT]]")
		}
		dev, port, _ = strings.Cut(args[1], "/")
		args = args[2:]
	}
	if err := noMore(args); err != nil {
		return err
	}
	var portNum uint64
	if port != "" {
		var err error
		if portNum, err = strconv.ParseUint(port, 10, 32); err != nil || portNum == 0 {
			return fmt.Errorf("invalid port %q in %s/%s", port, dev, port)
		}
	}
	return t.withConn(func(c conn) error {
		ports, err := c.Ports()
		if err != nil {
			return err
		}
		found := false
		for _, p := range ports {
			if dev != "" && p.DevName != dev || portNum != 0 && uint64(p.Port) != portNum {
				continue
			}
			found = true
			cs, err := t.counters(p.DevName, int(p.Port))
			if err != nil {
				return err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "link %s/%d", p.DevName, p.Port)
			for _, c := range cs {
				fmt.Fprintf(&b, " %s %d", c.Name, c.Value)
			}
			b.WriteByte('\n')
			if _, err := fmt.Fprint(t.w, b.String()); err != nil {
				return err
			}
		}
		if dev != "" && !found {
			return fmt.Errorf("%s: %w", linkName(dev, port), rdmanl.ErrNotFound)
		}
		return nil
	})
}

package main

import (
	"fmt"
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
	return t.forPorts(dev, port, func(p rdmanl.Port) error {
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
		_, err = fmt.Fprint(t.w, b.String())
		return err
	})
}

package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/purerdma/purerdma/internal/rdmanl"
)

func (t *tool) link(args []string) error {
	return dispatch("link command", args, t.linkShow,
		command{"add", t.linkAdd},
		command{"delete", t.linkDelete},
		command{"show", t.linkShow},
		command{"list", t.linkShow},
		command{"help", t.help},
	)
}

// linkShow prints all ports, those of one device (DEV), or one port
// (DEV/PORT).
func (t *tool) linkShow(args []string) error {
	var dev, port string
	if len(args) > 0 {
		dev, port, _ = strings.Cut(args[0], "/")
		args = args[1:]
	}
	if err := noMore(args); err != nil {
		return err
	}
	return t.forPorts(dev, port, func(p rdmanl.Port) error {
		_, err := fmt.Fprintln(t.w, p)
		return err
	})
}

// forPorts calls f for every port, those of device dev, or port dev/port,
// as `rdma link show` and `rdma statistic show` select them; a device or
// port named and not found is rdmanl.ErrNotFound.
func (t *tool) forPorts(dev, port string, f func(p rdmanl.Port) error) error {
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
			if err := f(p); err != nil {
				return err
			}
		}
		if dev != "" && !found {
			return fmt.Errorf("%s: %w", linkName(dev, port), rdmanl.ErrNotFound)
		}
		return nil
	})
}

func linkName(dev, port string) string {
	if port == "" {
		return dev
	}
	return dev + "/" + port
}

// linkAdd parses NAME type TYPE netdev NETDEV, the order iproute2 wants.
func (t *tool) linkAdd(args []string) error {
	if len(args) != 5 || !matches(args[1], "type") || !matches(args[3], "netdev") {
		return errors.New("usage: rdma link add NAME type TYPE netdev NETDEV")
	}
	return t.withConn(func(c conn) error { return c.LinkAdd(args[0], args[2], args[4]) })
}

func (t *tool) linkDelete(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: rdma link delete NAME")
	}
	return t.withConn(func(c conn) error { return c.LinkDel(args[0]) })
}

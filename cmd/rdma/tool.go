package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/purerdma/purerdma/internal/rdmanl"
	"github.com/purerdma/purerdma/uverbs"
)

const usage = `Usage: rdma OBJECT { COMMAND | help }
where  OBJECT := { dev | link | resource | statistic | help }
       rdma dev show [DEV]
       rdma link show [DEV[/PORT]]
       rdma link add NAME type TYPE netdev NETDEV
       rdma link delete NAME
       rdma resource show [DEV]
       rdma statistic show [link DEV[/PORT]]
`

// conn is what the commands use of an RDMA netlink connection, so that
// tests can stand in for the kernel.
type conn interface {
	Devices() ([]rdmanl.Device, error)
	Ports() ([]rdmanl.Port, error)
	ResourceSummaries() ([]rdmanl.ResourceSummary, error)
	LinkAdd(name, linkType, netdev string) error
	LinkDel(name string) error
	Close() error
}

// tool runs one command line.
type tool struct {
	w    io.Writer
	dial func() (conn, error)
	// counters reads a port's counters (uverbs.Device.PortCounters).
	counters func(dev string, port int) ([]uverbs.Counter, error)
}

// command is a word of the command line and what it does with the rest.
type command struct {
	name string
	run  func(args []string) error
}

// dispatch runs the command that args[0] names or abbreviates, trying them
// in order as iproute2 does, or def when args is empty.
func dispatch(what string, args []string, def func([]string) error, cmds ...command) error {
	if len(args) == 0 {
		return def(nil)
	}
	for _, c := range cmds {
		if matches(args[0], c.name) {
			return c.run(args[1:])
		}
	}
	return fmt.Errorf("unknown %s %q; try \"rdma help\"", what, args[0])
}

func (t *tool) run(args []string) error {
	return dispatch("object", args, t.help,
		command{"help", t.help},
		command{"dev", t.dev},
		command{"link", t.link},
		command{"resource", t.res},
		command{"statistic", t.stat},
	)
}

func (t *tool) help([]string) error {
	_, err := io.WriteString(t.w, usage)
	return err
}

// withConn runs f on a fresh connection.
func (t *tool) withConn(f func(c conn) error) error {
	c, err := t.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	return f(c)
}

// matches reports whether word is keyword or abbreviates it.
func matches(word, keyword string) bool { return word != "" && strings.HasPrefix(keyword, word) }

// noMore fails if args has words left over.
func noMore(args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected %q", strings.Join(args, " "))
	}
	return nil
}

// Command rdma shows and changes RDMA devices and links in the manner of
// iproute2's rdma tool, for the subset purerdma needs:
//
//	rdma dev show [DEV]
//	rdma link show [DEV[/PORT]]
//	rdma link add NAME type TYPE netdev NETDEV
//	rdma link delete NAME
//	rdma resource show [DEV]
//	rdma statistic show [link DEV[/PORT]]
//
// As in iproute2, every word may be abbreviated: rdma l s rxe0.
package main

import (
	"fmt"
	"os"

	"github.com/purerdma/purerdma/internal/rdmanl"
	"github.com/purerdma/purerdma/uverbs"
)

func main() {
	t := &tool{w: os.Stdout, dial: func() (conn, error) { return rdmanl.Dial() }, counters: portCounters}
	if err := t.run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "rdma:", err)
		os.Exit(1)
	}
}

// portCounters reads a port's counters from sysfs.
func portCounters(dev string, port int) ([]uverbs.Counter, error) {
	return uverbs.Device{Name: dev}.PortCounters(port)
}

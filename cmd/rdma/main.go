// Command rdma shows and changes RDMA devices and links in the manner of
// iproute2's rdma tool, for the subset purerdma needs:
//
//	rdma dev show [DEV]
//	rdma link show [DEV[/PORT]]
//	rdma link add NAME type TYPE netdev NETDEV
//	rdma link delete NAME
//
// As in iproute2, every word may be abbreviated: rdma l s rxe0.
package main

import (
	"fmt"
	"os"

	"github.com/purerdma/purerdma/internal/rdmanl"
)

func main() {
	t := &tool{w: os.Stdout, dial: func() (conn, error) { return rdmanl.Dial() }}
	if err := t.run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "rdma:", err)
		os.Exit(1)
	}
}

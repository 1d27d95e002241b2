// Command ibv_devices lists the RDMA devices of this host, in the format of
// rdma-core's ibv_devices.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/purerdma/purerdma/uverbs"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ibv_devices:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	devs, err := uverbs.Devices()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "    %-16s\t   node GUID\n", "device")
	fmt.Fprintf(w, "    %-16s\t----------------\n", "------")
	for _, d := range devs {
		fmt.Fprintf(w, "    %-16s\t%016x\n", d.Name, uint64(d.NodeGUID))
	}
	return nil
}

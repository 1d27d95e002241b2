// Command devinfo prints the attributes of the RDMA devices of this host, in
// the format of rdma-core's ibv_devinfo.
//
//	devinfo [-d DEV] [-i PORT] [-l] [-v]
//
// Without -v the output matches ibv_devinfo byte for byte. With -v it
// prints every line ibv_devinfo -v does, the GID table included; the
// provider-private capabilities (TSO, RSS hash, packet pacing: mlx5 only)
// print as zero, as libibverbs reports them for rxe and siw.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "devinfo:", err)
		os.Exit(1)
	}
}

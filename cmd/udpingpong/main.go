// Command udpingpong is a Go port of rdma-core's ibv_ud_pingpong: two UD
// queue pairs learn each other's address over TCP and bounce datagrams
// between them. It interoperates with the C tool.
//
//	udpingpong [options]          start a server and wait for connection
//	udpingpong [options] <host>   connect to server at <host>
//
// The options are ibv_ud_pingpong's. On RoCE (rxe) give -g, the local GID
// index: UD addresses there must be global.
//
// Unlike the C tool, which sends every datagram through the address built
// from the TCP exchange, each side replies through an address made from
// the first datagram it receives (uverbs.Context.AHAttrFromWC, the
// ibv_create_ah_from_wc way), which routes to the same peer.
package main

import (
	"context"
	"os"

	"github.com/purerdma/purerdma/cmd/internal/pingpong"
)

func main() {
	os.Exit(runContext(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// tool is ibv_ud_pingpong's command line: no -m (a UD message fits the
// port's MTU) and no -c.
var tool = &pingpong.Tool{
	Name: "udpingpong",
	Opts: []pingpong.Opt{
		pingpong.Arg('p', "port"), pingpong.Arg('d', "ib-dev"), pingpong.Arg('i', "ib-port"),
		pingpong.Arg('s', "size"), pingpong.Arg('r', "rx-depth"), pingpong.Arg('n', "iters"),
		pingpong.Arg('l', "sl"), pingpong.Flag('e', "events"), pingpong.Arg('g', "gid-idx"),
	},
	Defaults: pingpong.Options{Port: 18515, IBPort: 1, Size: 2048, NumQP: 1, RxDepth: 500, Iters: 1000, GIDIdx: -1},
	// The usage text goes to stdout.
	Usage: `Usage:
  %[1]s            start a server and wait for connection
  %[1]s <host>     connect to server at <host>

Options:
  -p, --port=<port>      listen on/connect to port <port> (default 18515)
  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)
  -i, --ib-port=<port>   use port <port> of IB device (default 1)
  -s, --size=<size>      size of message to exchange (default 2048)
  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)
  -n, --iters=<iters>    number of exchanges (default 1000)
  -e, --events           sleep on CQ events (default poll)
  -g, --gid-idx=<gid index> local port gid index
`,
}

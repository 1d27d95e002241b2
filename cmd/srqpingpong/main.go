// Command srqpingpong is a Go port of rdma-core's ibv_srq_pingpong: it
// connects several RC queue pairs (-q, 16 by default) whose receives all
// come from one shared receive queue, exchanging addresses over TCP, and
// bounces send messages over each. It interoperates with the C tool.
//
//	srqpingpong [options]          start a server and wait for connection
//	srqpingpong [options] <host>   connect to server at <host>
//
// The options are ibv_srq_pingpong's.
package main

import (
	"context"
	"os"

	"github.com/purerdma/purerdma/cmd/internal/pingpong"
	"github.com/purerdma/purerdma/uverbs"
)

func main() {
	os.Exit(runContext(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// tool is ibv_srq_pingpong's command line.
var tool = &pingpong.Tool{
	Name: "srqpingpong",
	Opts: []pingpong.Opt{
		pingpong.Arg('p', "port"), pingpong.Arg('d', "ib-dev"), pingpong.Arg('i', "ib-port"),
		pingpong.Arg('s', "size"), pingpong.Arg('m', "mtu"), pingpong.Arg('q', "num-qp"),
		pingpong.Arg('r', "rx-depth"), pingpong.Arg('n', "iters"), pingpong.Arg('l', "sl"),
		pingpong.Flag('e', "events"), pingpong.Arg('g', "gid-idx"),
	},
	Defaults: pingpong.Options{Port: 18515, IBPort: 1, Size: 4096, MTU: uverbs.MTU1024, NumQP: 16, RxDepth: 500, Iters: 1000, GIDIdx: -1},
	Set:      setNumQP,
	// The usage text goes to stdout.
	Usage: `Usage:
  %[1]s            start a server and wait for connection
  %[1]s <host>     connect to server at <host>

Options:
  -p, --port=<port>      listen on/connect to port <port> (default 18515)
  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)
  -i, --ib-port=<port>   use port <port> of IB device (default 1)
  -s, --size=<size>      size of message to exchange (default 4096)
  -m, --mtu=<size>       path MTU (default 1024)
  -q, --num-qp=<num>     number of QPs to use (default 16)
  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)
  -n, --iters=<iters>    number of exchanges per QP(default 1000)
  -l, --sl=<sl>          service level value
  -e, --events           sleep on CQ events (default poll)
  -g, --gid-idx=<gid index> local port gid index
`,
}

// setNumQP applies -q, the one letter of the table the other tools lack.
// C keeps its QPs in an array of maxQP.
func setNumQP(o *pingpong.Options, c byte, val string) (err error) {
	o.NumQP, err = pingpong.Num(c, val, 1, maxQP)
	return err
}

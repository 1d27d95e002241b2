// Command rcpingpong is a Go port of rdma-core's ibv_rc_pingpong: it
// connects two RC queue pairs, over TCP for the address exchange, and
// bounces send messages between them. It interoperates with the C tool.
//
//	rcpingpong [options]          start a server and wait for connection
//	rcpingpong [options] <host>   connect to server at <host>
//
// The options are ibv_rc_pingpong's. Those that need features purerdma does
// not have (-o, -O, -P, -t, -j, -N, -U) are rejected with a message.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/purerdma/purerdma/cmd/internal/pingpong"
	"github.com/purerdma/purerdma/uverbs"
)

func main() {
	os.Exit(runContext(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// tool is ibv_rc_pingpong's command line.
var tool = &pingpong.Tool{
	Name: "rcpingpong",
	Opts: []pingpong.Opt{
		pingpong.Arg('p', "port"), pingpong.Arg('d', "ib-dev"), pingpong.Arg('i', "ib-port"),
		pingpong.Arg('s', "size"), pingpong.Arg('m', "mtu"), pingpong.Arg('r', "rx-depth"),
		pingpong.Arg('n', "iters"), pingpong.Arg('l', "sl"), pingpong.Flag('e', "events"),
		pingpong.Arg('g', "gid-idx"), pingpong.Flag('o', "odp"), pingpong.Flag('O', "iodp"),
		pingpong.Flag('P', "prefetch"), pingpong.Flag('t', "ts"), pingpong.Flag('c', "chk"),
		pingpong.Flag('j', "dm"), pingpong.Flag('N', "new_send"), pingpong.Flag('U', "allow-cc-unprotected"),
	},
	Defaults: pingpong.Options{Port: 18515, IBPort: 1, Size: 4096, MTU: uverbs.MTU1024, NumQP: 1, RxDepth: 500, Iters: 1000, GIDIdx: -1},
	Set:      setUnsupported,
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
  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)
  -n, --iters=<iters>    number of exchanges (default 1000)
  -l, --sl=<sl>          service level value
  -e, --events           sleep on CQ events (default poll)
  -g, --gid-idx=<gid index> local port gid index
  -c, --chk              validate received buffer
Not supported by this port: -o, -O, -P, -t, -j, -N, -U.
`,
}

// unsupported names the options that are parsed but rejected.
var unsupported = map[byte]string{
	'o': "on-demand paging (-o)",
	'O': "implicit on-demand paging (-O)",
	'P': "MR prefetch (-P)",
	't': "completion timestamps (-t)",
	'j': "device memory (-j)",
	'N': "the new post send API (-N)",
	'U': "CoCo unprotected memory (-U)",
}

// setUnsupported rejects the options of ibv_rc_pingpong's table that
// this port does not have; they are not usage errors.
func setUnsupported(_ *pingpong.Options, c byte, _ string) error {
	return fmt.Errorf("%s is not supported by this port", unsupported[c])
}

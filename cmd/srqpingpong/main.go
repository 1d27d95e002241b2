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
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/purerdma/purerdma/uverbs"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the parsed command line.
type options struct {
	port    int    // -p: TCP port
	ibDev   string // -d: device name, "" for the first one
	ibPort  int    // -i
	size    int    // -s: message size
	mtu     uverbs.MTU
	numQP   int // -q
	rxDepth int // -r
	iters   int // -n
	sl      int // -l
	events  bool
	gidIdx  int    // -g, -1 when not given
	server  string // the positional argument; "" makes a server
}

func defaultOptions() options {
	return options{port: 18515, ibPort: 1, size: 4096, mtu: uverbs.MTU1024, numQP: 16, rxDepth: 500, iters: 1000, gidIdx: -1}
}

// opt is one option of ibv_srq_pingpong's getopt_long table.
type opt struct {
	short byte
	long  string
	arg   bool
}

var optTable = []opt{
	{'p', "port", true}, {'d', "ib-dev", true}, {'i', "ib-port", true},
	{'s', "size", true}, {'m', "mtu", true}, {'q', "num-qp", true},
	{'r', "rx-depth", true}, {'n', "iters", true}, {'l', "sl", true},
	{'e', "events", false}, {'g', "gid-idx", true},
}

// usageError is a command line that ibv_srq_pingpong answers with its
// usage text. msg, when set, goes to stderr first (as getopt's complaints
// do).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// parseArgs parses args as getopt_long does with ibv_srq_pingpong's table:
// short options may be grouped and take their argument attached or as the
// next word, long options take "=value" or the next word, and options may
// follow the positional argument.
func parseArgs(args []string) (options, error) {
	o := defaultOptions()
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			var found *opt
			for j := range optTable {
				if optTable[j].long == name {
					found = &optTable[j]
				}
			}
			if found == nil {
				return o, &usageError{fmt.Sprintf("unrecognized option '--%s'", name)}
			}
			if found.arg && !hasVal {
				if i+1 >= len(args) {
					return o, &usageError{fmt.Sprintf("option '--%s' requires an argument", name)}
				}
				i++
				val = args[i]
			} else if !found.arg && hasVal {
				return o, &usageError{fmt.Sprintf("option '--%s' doesn't allow an argument", name)}
			}
			if err := o.set(found.short, val); err != nil {
				return o, err
			}
		case len(a) > 1 && a[0] == '-':
			for k := 1; k < len(a); k++ {
				c := a[k]
				var found *opt
				for j := range optTable {
					if optTable[j].short == c {
						found = &optTable[j]
					}
				}
				if found == nil {
					return o, &usageError{fmt.Sprintf("invalid option -- '%c'", c)}
				}
				val := ""
				if found.arg {
					if k+1 < len(a) {
						val = a[k+1:]
					} else if i+1 < len(args) {
						i++
						val = args[i]
					} else {
						return o, &usageError{fmt.Sprintf("option requires an argument -- '%c'", c)}
					}
					k = len(a)
				}
				if err := o.set(c, val); err != nil {
					return o, err
				}
			}
		default:
			pos = append(pos, a)
		}
	}
	switch len(pos) {
	case 0:
	case 1:
		o.server = pos[0]
	default:
		return o, &usageError{}
	}
	return o, nil
}

// set applies option c with its argument val.
func (o *options) set(c byte, val string) error {
	num := func(lo, hi int64) (int, error) {
		// strtol with base 0: decimal, 0x hex or 0 octal.
		n, err := strconv.ParseInt(val, 0, 64)
		if err != nil || n < lo || n > hi {
			return 0, &usageError{fmt.Sprintf("invalid argument %q for -%c", val, c)}
		}
		return int(n), nil
	}
	var err error
	switch c {
	case 'p':
		o.port, err = num(0, 65535)
	case 'd':
		o.ibDev = val
	case 'i':
		o.ibPort, err = num(1, 255)
	case 's':
		o.size, err = num(1, 1<<31-1)
	case 'm':
		var n int
		if n, err = num(0, 1<<31-1); err == nil {
			if o.mtu = mtuToEnum(n); o.mtu == 0 {
				err = &usageError{fmt.Sprintf("invalid MTU %q: 256, 512, 1024, 2048 or 4096", val)}
			}
		}
	case 'q':
		// C keeps its QPs in an array of maxQP.
		o.numQP, err = num(1, maxQP)
	case 'r':
		o.rxDepth, err = num(1, 1<<31-1)
	case 'n':
		o.iters, err = num(1, 1<<31-1)
	case 'l':
		o.sl, err = num(0, 15)
	case 'e':
		o.events = true
	case 'g':
		o.gidIdx, err = num(-1<<31, 1<<31-1)
	}
	return err
}

// mtuToEnum is pp_mtu_to_enum: 0 for a size that is not an IB MTU.
func mtuToEnum(n int) uverbs.MTU {
	switch n {
	case 256:
		return uverbs.MTU256
	case 512:
		return uverbs.MTU512
	case 1024:
		return uverbs.MTU1024
	case 2048:
		return uverbs.MTU2048
	case 4096:
		return uverbs.MTU4096
	}
	return 0
}

// usage prints ibv_srq_pingpong's usage text, which goes to stdout.
func usage(w io.Writer, argv0 string) {
	fmt.Fprintf(w, `Usage:
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
`, argv0)
}

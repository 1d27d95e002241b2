// Command rperf measures RDMA latency and bandwidth as perftest's
// ib_*_lat and ib_*_bw tools do, in Go, with perftest's options and
// output, so that the two can be compared.
//
//	rperf <test> [options]          start a server and wait for a client
//	rperf <test> [options] <host>   run the test against the server at <host>
//	rperf rpma server|client ...    the rpma package's latency (rpma.go)
//
// test is write_lat, read_lat, send_lat, atomic_lat, write_bw, read_bw or
// send_bw. The options are perftest's: -d <dev>, -i <port>, -x <gid index>,
// -s <size>, -n <iters>, -p <tcp port>, -t <tx depth>, -I <inline size>,
// -a (all sizes),
// -F (ignored), and -json for one JSON object per size. The address
// exchange is rperf's own, so rperf talks to rperf, not to perftest.
//
// The comparison with perftest's C programs (make bench, make profile)
// is not part of the tool: hack/benchcmp runs rperf and them in turns.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/purerdma/purerdma/internal/perftest"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// options are the parsed command line.
type options struct {
	test    int // index in tests
	dev     string
	ibPort  int
	gidIdx  int // -1: the port's RoCE v2 IPv4 GID, else 0
	size    int
	iters   int
	port    int
	all     bool
	txDepth int
	inline  int // -I; -1 for perftest's default
	json    bool
	server  string // "" for the server side
}

// sizes returns the message sizes to run.
func (o *options) sizes() []int {
	if perftest.Tests[o.test].Name == "atomic_lat" {
		return []int{8}
	}
	if !o.all {
		return []int{o.size}
	}
	var s []int
	for n := 2; n <= perftest.MaxAllSize; n *= 2 {
		s = append(s, n)
	}
	return s
}

// maxSize is the largest size o runs.
func (o *options) maxSize() int {
	s := o.sizes()
	return s[len(s)-1]
}

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// parseArgs parses "<test> [options] [server]". Options take their
// argument as the next word or attached (-s64, --size=64).
func parseArgs(args []string) (options, error) {
	if len(args) == 0 {
		return options{}, &usageError{"no test named"}
	}
	ti, ok := perftest.Find(args[0])
	if !ok {
		return options{}, &usageError{fmt.Sprintf("unknown test %q", args[0])}
	}
	o := options{test: ti, ibPort: 1, gidIdx: -1, port: 18515, txDepth: 128, size: -1, iters: -1, inline: -1}
	withArg := map[string]byte{
		"d": 'd', "ib-dev": 'd', "i": 'i', "ib-port": 'i', "x": 'x', "gid-index": 'x',
		"s": 's', "size": 's', "n": 'n', "iters": 'n', "p": 'p', "port": 'p',
		"t": 't', "tx-depth": 't', "D": 'D', "duration": 'D', "I": 'I', "inline_size": 'I',
	}
	noArg := map[string]byte{"a": 'a', "all": 'a', "F": 'F', "CPU-freq": 'F', "R": 'R', "rdma_cm": 'R', "json": 'j'}
	var pos []string
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name := strings.TrimLeft(a, "-")
		val, hasVal := "", false
		if k := strings.IndexByte(name, '='); k >= 0 {
			name, val, hasVal = name[:k], name[k+1:], true
		}
		if c, ok := noArg[name]; ok && !hasVal {
			switch c {
			case 'a':
				o.all = true
			case 'j':
				o.json = true
			case 'R':
				return o, errors.New("-R (rdma_cm connection) is not supported: rperf exchanges addresses over its own TCP connection")
			}
			continue
		}
		c, ok := withArg[name]
		if !ok && a[1] != '-' && len(name) > 1 {
			// -s64: a short option with its argument attached.
			if c2, ok2 := withArg[name[:1]]; ok2 {
				c, ok, val, hasVal = c2, true, name[1:], true
			}
		}
		if !ok {
			return o, &usageError{fmt.Sprintf("unknown option %s", a)}
		}
		if !hasVal {
			if i+1 >= len(rest) {
				return o, &usageError{fmt.Sprintf("option %s needs an argument", a)}
			}
			i++
			val = rest[i]
		}
		if err := o.set(c, val); err != nil {
			return o, err
		}
	}
	switch len(pos) {
	case 0:
	case 1:
		o.server = pos[0]
	default:
		return o, &usageError{fmt.Sprintf("more than one server: %q", pos)}
	}
	lat := perftest.Tests[o.test].Lat
	if o.size < 0 {
		o.size = 65536
		if lat {
			o.size = 2
		}
	}
	if o.iters < 0 {
		o.iters = 5000
		if lat {
			o.iters = 1000
		}
	}
	if lat && o.iters < 5 {
		return o, &usageError{"latency tests need at least 5 iterations"}
	}
	if perftest.Tests[o.test].Name == "atomic_lat" {
		o.size = 8
	}
	return o, nil
}

func (o *options) set(c byte, val string) error {
	num := func(lo, hi int) (int, error) {
		n, err := strconv.Atoi(val)
		if err != nil || n < lo || n > hi {
			return 0, &usageError{fmt.Sprintf("invalid argument %q for -%c", val, c)}
		}
		return n, nil
	}
	var err error
	switch c {
	case 'd':
		o.dev = val
	case 'i':
		o.ibPort, err = num(1, 255)
	case 'x':
		o.gidIdx, err = num(0, 255)
	case 's':
		o.size, err = num(1, perftest.MaxAllSize)
	case 'n':
		o.iters, err = num(1, 1<<30)
	case 'p':
		o.port, err = num(0, 65535)
	case 't':
		o.txDepth, err = num(1, 4096)
	case 'I':
		o.inline, err = num(0, 1024)
	case 'D':
		err = errors.New("-D (duration mode) is not supported: use -n")
	}
	return err
}

const usageText = `Usage:
  rperf <test> [options]          start a server and wait for connection
  rperf <test> [options] <host>   connect to server at <host>
  rperf rpma server <addr> <port> <size>
  rperf rpma client <addr> <port> read|write_flush|sendrecv <size> <iters>
                                  the rpma package's latency: read, write and flush, send and receive

Tests: write_lat read_lat send_lat atomic_lat write_bw read_bw send_bw

Options:
  -d, --ib-dev=<dev>       use IB device <dev> (default first device found)
  -i, --ib-port=<port>     use port <port> of IB device (default 1)
  -x, --gid-index=<index>  local GID index (default: the RoCE v2 IPv4 one)
  -s, --size=<size>        message size (default 2 for latency, 65536 for BW)
  -n, --iters=<iters>      iterations (default 1000 for latency, 5000 for BW)
  -p, --port=<port>        TCP port of the address exchange (default 18515)
  -t, --tx-depth=<dep>     BW tests: outstanding sends (default 128)
  -I, --inline_size=<n>    inline limit (default as perftest: 0 on rxe/siw)
  -a, --all                run sizes 2 to 2^23
  -F, --CPU-freq           accepted and ignored
  --json                   print one JSON object per size instead of the table
Not supported: -D (duration), -R (rdma_cm).
`

// run is the whole program; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "rpma" {
		return rpmaMain(ctx, args[1:], stdout, stderr)
	}
	o, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "rperf: %v\n", err)
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprint(stderr, usageText)
		}
		return 1
	}
	if err := perf(ctx, &o, stdout); err != nil {
		fmt.Fprintf(stderr, "rperf: %v\n", err)
		return 1
	}
	return 0
}

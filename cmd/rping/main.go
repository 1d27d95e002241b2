// Command rping is a Go port of rdma-core's rping (librdmacm/examples/
// rping.c, rdma-core v44): it connects a client and a server with the RDMA
// connection manager and runs rping's ping loop over the connection. It
// interoperates with the C tool.
//
//	rping -s [-vVd] [-S size] [-C count] [-a addr] [-p port]
//	rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]
//
// Each ping: the client SENDs the address, rkey and size of its source
// buffer; the server RDMA READs it and SENDs a "go ahead"; the client SENDs
// the address of its sink buffer; the server RDMA WRITEs the data back and
// SENDs a "go ahead" again. With -V the client compares the two buffers,
// with -v both sides print the data.
//
// The options and their quirks are rping's. With -q rping creates the QP
// itself with verbs rather than with rdma_create_qp, moves it through its
// states with the attributes rdma_init_qp_attr gives, completes the
// client's connection with rdma_establish, and destroys the QP itself.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const (
	defaultPort = 7174
	defaultSize = 64
	// bufSize is RPING_BUFSIZE: sizes up to bufSize-1 are valid.
	bufSize = 64 * 1024
	// minBufSize is RPING_MIN_BUFSIZE: sizeof(stringify(INT_MAX)) +
	// sizeof(RPING_MSG_FMT). rping.c does not include <limits.h>, so
	// INT_MAX is not a macro there and the string is "INT_MAX": 8 + 15.
	minBufSize = len("INT_MAX") + 1 + len(msgFmt) + 1
	// sqDepth is RPING_SQ_DEPTH.
	sqDepth = 16
	// optstring is rping's getopt string; 't' is in it but has no case,
	// so -t gets the usage text, as in C.
	optstring = "a:I:Pp:C:S:t:scvVdq"
)

// options are the parsed command line.
type options struct {
	server     int // -s 1, -c 0, -1 when neither
	addr       netip.Addr
	source     netip.Addr // -I; invalid when not given
	port       uint16
	count      int
	size       int
	verbose    int
	validate   int
	debug      int
	selfQP     bool // -q
	persistent bool // -P
}

func defaultOptions() options {
	return options{server: -1, addr: netip.IPv4Unspecified(), port: defaultPort, size: defaultSize}
}

// parseArgs parses args as rping's getopt loop does. stdout and stderr get
// what the C loop prints while parsing: debug lines, complaints and the
// usage text. The status is 0, or rping's exit status when parsing fails.
// Like C, a later -a or -I that succeeds clears an earlier error of -S, -C,
// -a or -I.
func parseArgs(ctx context.Context, args []string, stdout, stderr io.Writer) (options, int) {
	o := defaultOptions()
	ret := 0
	g := getopt{args: args, optstring: optstring}
	for {
		op, arg, ok := g.next()
		if !ok {
			break
		}
		debugf := func(format string, a ...any) {
			if o.debug > 0 {
				fmt.Fprintf(stdout, format, a...)
			}
		}
		switch op {
		case 'a':
			o.addr, ret = getAddr(ctx, arg, stdout)
		case 'I':
			o.source, ret = getAddr(ctx, arg, stdout)
		case 'P':
			o.persistent = true
		case 'p':
			o.port = uint16(atoi(arg))
			debugf("port %d\n", atoi(arg))
		case 's':
			o.server = 1
			debugf("server\n")
		case 'c':
			o.server = 0
			debugf("client\n")
		case 'S':
			o.size = atoi(arg)
			if o.size < minBufSize || o.size > bufSize-1 {
				fmt.Fprintf(stderr, "Invalid size %d (valid range is %d to %d)\n", o.size, minBufSize, bufSize)
				ret = 22 // EINVAL
			} else {
				debugf("size %d\n", atoi(arg))
			}
		case 'C':
			o.count = atoi(arg)
			if o.count < 0 {
				fmt.Fprintf(stderr, "Invalid count %d\n", o.count)
				ret = 22
			} else {
				debugf("count %d\n", o.count)
			}
		case 'v':
			o.verbose++
			debugf("verbose\n")
		case 'V':
			o.validate++
			debugf("validate data\n")
		case 'd':
			o.debug++
		case 'q':
			o.selfQP = true
		default:
			usage(stdout)
			return o, 22
		}
	}
	if ret != 0 {
		return o, ret
	}
	if o.server == -1 {
		usage(stdout)
		return o, 22
	}
	return o, 0
}

// getopt is POSIX getopt with GNU's permutation, with opterr 0: an unknown
// option or a missing argument is '?'. Operands are skipped, as rping
// ignores them.
type getopt struct {
	args      []string
	optstring string
	i         int    // next word
	rest      string // the rest of a word of grouped options
}

func (g *getopt) next() (op byte, arg string, ok bool) {
	for g.rest == "" {
		if g.i >= len(g.args) {
			return 0, "", false
		}
		a := g.args[g.i]
		g.i++
		switch {
		case a == "--":
			g.i = len(g.args)
		case len(a) > 1 && a[0] == '-':
			g.rest = a[1:]
		}
	}
	c := g.rest[0]
	g.rest = g.rest[1:]
	k := strings.IndexByte(g.optstring, c)
	if c == ':' || k < 0 {
		return '?', "", true
	}
	if k+1 < len(g.optstring) && g.optstring[k+1] == ':' {
		switch {
		case g.rest != "":
			arg, g.rest = g.rest, ""
		case g.i < len(g.args):
			arg = g.args[g.i]
			g.i++
		default:
			return '?', "", true
		}
	}
	return c, arg, true
}

// atoi is C's atoi: leading blanks, a sign and the digits up to the first
// non-digit; 0 when there are none. The result wraps as a C int.
func atoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int64(s[i]-'0')
		if n > 1<<40 {
			break // out of range is undefined in C; stay far from overflow
		}
	}
	if neg {
		n = -n
	}
	return int(int32(n))
}

// getAddr is rping's get_addr: an IP address or a host name, the first
// address getaddrinfo would give. On failure it prints rping's message on
// stdout and returns getaddrinfo's (negative) error: EAI_NONAME for an unknown name,
// EAI_AGAIN when the lookup failed.
func getAddr(ctx context.Context, s string, stdout io.Writer) (netip.Addr, int) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a, 0
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", s)
	if err != nil || len(addrs) == 0 {
		var de *net.DNSError
		if err == nil || errors.As(err, &de) && de.IsNotFound {
			fmt.Fprintf(stdout, "getaddrinfo failed (%s) - invalid hostname or IP address\n", "Name or service not known")
			return netip.Addr{}, -2 // EAI_NONAME
		}
		fmt.Fprintf(stdout, "getaddrinfo failed (%s) - invalid hostname or IP address\n", "Temporary failure in name resolution")
		return netip.Addr{}, -3 // EAI_AGAIN
	}
	return addrs[0].Unmap(), 0
}

// usage prints rping's usage text, which goes to stdout.
func usage(w io.Writer) {
	fmt.Fprint(w, `rping -s [-vVd] [-S size] [-C count] [-a addr] [-p port]
rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]
	-c		client side
	-I		Source address to bind to for client.
	-s		server side.  To bind to any address with IPv6 use -a ::0
	-v		display ping data to stdout
	-V		validate ping data
	-d		debug printfs
	-S size 	ping data size
	-C count	ping count times
	-a addr		address
	-p port		port
	-P		persistent server mode allowing multiple connections
	-q		use self-created, self-modified QP
`)
}

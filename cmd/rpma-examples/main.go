// Command rpma-examples holds Go ports of librpma 1.3's examples
// (examples/ in github.com/pmem/rpma at tag 1.3.0), built on package rpma.
// Each side keeps its C example's private data, message layout and
// printed lines, so it can talk to the C program of the same name.
//
//	rpma-examples <example> server|client <addr> <port> [args]
//	rpma-examples demo [rxe-addr] [siw-addr]
//
// Memory is DRAM from mr.Alloc, as in a C build without libpmem; a
// <pmem-path> argument is accepted and ignored. The peers flush as
// librpma 1.2 does, by an RDMA read, as the C examples do when built
// against Debian 12's librpma; RPMA_EXAMPLES_FLUSH=auto chooses librpma
// 1.3's native flush where the device has it (see peerOptions).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// mainFunc is one side's main: args are the C program's argv[1:], the
// result its return value.
type mainFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) int

type example struct {
	name           string
	server, client mainFunc
}

var examples = []example{
	{"01-connection", connectionServer, connectionClient},
	{"02-read-to-volatile", readServer, readClient},
	{"04-write-to-persistent", writeServer, writeClient},
	{"05-flush-to-persistent", flushServer, flushClient},
	{"06-multiple-connections", multiServer(false), multiClient},
	{"06scch-multiple-connections", multiServer(true), multiClient},
	{"07-atomic-write", atomicServer, atomicClient},
	{"08-messages-ping-pong", pingPongServer, pingPongClient},
	{"08srq-simple-messages-ping-pong-with-srq", srqPingPongServer, srqPingPongClient(false)},
	{"10-send-with-imm", sendImmServer, sendImmClient},
	{"11-write-with-imm", writeImmServer, writeImmClient},
	{"12-receive-completion-queue", rcqServer(false), rcqClient(false)},
	{"12scch-receive-completion-queue", rcqServer(true), rcqClient(true)},
	{"13-messages-ping-pong-with-srq", multiSRQServer, srqPingPongClient(true)},
}

func lookup(name string) *example {
	for i := range examples {
		if examples[i].name == name {
			return &examples[i]
		}
	}
	return nil
}

func usage(w io.Writer) int {
	fmt.Fprintln(w, "usage: rpma-examples <example> server|client <addr> <port> [args]")
	fmt.Fprintln(w, "       rpma-examples demo [rxe-addr] [siw-addr]")
	fmt.Fprintln(w, "examples:")
	for _, e := range examples {
		fmt.Fprintln(w, "  "+e.name)
	}
	return 2
}

// run dispatches a command line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) >= 1 && args[0] == "demo" {
		return demo(ctx, args[1:], stdout, stderr)
	}
	if len(args) < 2 {
		return usage(stderr)
	}
	e := lookup(args[0])
	if e == nil {
		fmt.Fprintf(stderr, "rpma-examples: unknown example %q\n", args[0])
		return usage(stderr)
	}
	var f mainFunc
	switch args[1] {
	case "server":
		f = e.server
	case "client":
		f = e.client
	default:
		return usage(stderr)
	}
	return f(ctx, args[2:], stdout, stderr)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageErr prints a side's usage line and returns -1.
func usageErr(stderr io.Writer, name, side, args string) int {
	fmt.Fprintf(stderr, "usage: rpma-examples %s %s %s\n", name, side, args)
	return -1
}

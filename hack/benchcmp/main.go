// Command benchcmp is the benchmark harness: it runs purerdma's Go tools
// and their C counterparts side by side on one RDMA device and reports
// how they compare. hack/vm packs it into the guest as
// /opt/purerdma/bin/benchcmp, next to rperf; make bench and make profile
// run it there and write its report under docs/.
//
//	benchcmp compare [flags]   rperf against perftest's ib_* programs, and
//	                           rperf rpma against the C librpma peer, in
//	                           alternating rounds: a markdown table
//	benchcmp profile [flags]   compare's pairs under perf record -a: where
//	                           each side's time goes
//
// compare runs each test and size in rounds, rperf's server and client
// then perftest's, each side a process of its own, on loopback, and prints
// the medians and the ratio Go/C as a markdown table between the lines
// BENCH-BEGIN and BENCH-END (compare.go; hack/vm bench reads it). profile
// prints its tables between PROFILE-BEGIN and PROFILE-END (profile.go).
//
// It is not a user tool: it assumes the VM's layout (rxe0,
// PURERDMA_RXE_ADDR, the C tools, the test peers) and judges the
// library's speed rather than measure a user's network; rperf and
// rperf rpma (cmd/rperf) are the tools. -rperf names the rperf program,
// by default the one beside benchcmp; -d, -addr, -ctools and -rpma-peer
// say where the rest is on another host (make test-native, hack/native.sh,
// runs a short compare on the host's device).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

const usageText = `Usage:
  benchcmp compare [-d dev] [-x gid] [-rounds n] [-sizes a,b] [-n iters] [-tests all|t1,t2] [-rperf path]
                   Go against perftest's C tools, a markdown table
  benchcmp profile [-tests t1,t2] [-s size] [-n iters] [-perf path] [-window 30%-70%] [-rperf path]
                   compare's pairs under perf record -a: where the time goes
Each takes -h for its flags.
`

// run is the whole program; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "compare":
			return compare(ctx, args[1:], stdout, stderr)
		case "profile":
			return profile(ctx, args[1:], stdout, stderr)
		}
		fmt.Fprintf(stderr, "benchcmp: unknown command %q\n", args[0])
	}
	fmt.Fprint(stderr, usageText)
	return 2
}

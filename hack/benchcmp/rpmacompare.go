package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/purerdma/purerdma/internal/netport"
	"github.com/purerdma/purerdma/internal/perftest"
)

// compare's rpma rows: rperf rpma (cmd/rperf/rpma.go) against the C librpma program
// test/rpmabench/testdata/peer.c, which hack/vm packs with the C tools.

const (
	defRPMAPeer  = "/opt/purerdma/test/rpmabench"
	defRPMAIters = 1000
)

// rpmaSizes are the rpma rows' message sizes.
var rpmaSizes = []int{64, 4096}

var rpmaMetric = metric{"median usec (lower is better)", true, func(r perftest.Result) float64 { return r.TTypical }}

// rpmaIters is the iteration count of one rpma run.
func (c *compareOpts) rpmaIters() int {
	if c.iters > 0 {
		return c.iters
	}
	return defRPMAIters
}

// compareRPMA runs the rpma rows in rounds, Go then C, and returns them
// with notes for below the table (why rows are missing).
func (c *compareOpts) compareRPMA(ctx context.Context, stdout io.Writer, start time.Time) (rows, counts []row, notes []string) {
	if !c.rpma {
		return nil, nil, nil
	}
	if _, err := os.Stat(c.rpmaPeer); err != nil {
		note := fmt.Sprintf("rpma rows (rpma_read, rpma_write_flush, rpma_sendrecv) skipped: no C librpma peer: %v", err)
		fmt.Fprintf(stdout, "compare: %s\n", note)
		return nil, nil, []string{note}
	}
	iters := c.rpmaIters()
	fmt.Fprintf(stdout, "%srpma=Go rpma against C librpma (%s), %d iterations after %d of warm-up, sizes %s\n",
		benchInfo, c.rpmaPeer, iters, perftest.RPMAWarmup(iters), joinInts(rpmaSizes))
	for _, side := range []string{stackGo, stackC} {
		srv, cli := c.roles(side)
		_, err := c.runRPMAPair(ctx, srv, cli, perftest.RPMATests[0], rpmaSizes[0], iters, &runCounts{})
		fmt.Fprintf(stdout, "compare: rpma warm-up %s: %v (%v)\n", side, err, time.Since(start).Round(time.Second))
	}
	for _, test := range perftest.RPMATests {
		for _, size := range rpmaSizes {
			r := row{test: "rpma_" + test, bytes: size, metric: rpmaMetric, rounds: c.rounds}
			cs := counterRows(r.test, size, c.rounds)
			for round := 1; round <= c.rounds; round++ {
				for _, side := range []string{stackGo, stackC} {
					v := math.NaN()
					var rc runCounts
					srv, cli := c.roles(side)
					res, err := c.runRPMAPair(ctx, srv, cli, test, size, iters, &rc)
					addCounts(cs, side, rc, err != nil)
					line := fmt.Sprintf("compare: %s %d B round %d/%d %s:", r.test, size, round, c.rounds, side)
					if err == nil {
						v = res.MedianUS
						line += " " + formatNum(v)
					} else {
						line += " failed: " + err.Error()
					}
					r.add(side, v)
					fmt.Fprintf(stdout, "%s (%v)\n", line, time.Since(start).Round(time.Second))
				}
			}
			rows = append(rows, r)
			counts = append(counts, cs...)
		}
	}
	return rows, counts, nil
}

// runRPMAPair runs one server and client pair, each "Go" or "C",
// retrying a failed pair, and returns the client's result.
func (c *compareOpts) runRPMAPair(ctx context.Context, srvSide, cliSide, test string, size, iters int, counts *runCounts) (perftest.RPMAResult, error) {
	return retry(ctx, func() (perftest.RPMAResult, error) {
		return c.runRPMAPairOnce(ctx, srvSide, cliSide, test, size, iters, counts)
	})
}

// lineWatch is a program's stdout that closes ready at a line "listening".
type lineWatch struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
	seen  bool
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.seen && (strings.HasPrefix(w.buf.String(), "listening\n") || strings.Contains(w.buf.String(), "\nlistening\n")) {
		w.seen = true
		close(w.ready)
	}
	return len(p), nil
}

func (w *lineWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func (c *compareOpts) runRPMAPairOnce(ctx context.Context, srvSide, cliSide, test string, size, iters int, counts *runCounts) (perftest.RPMAResult, error) {
	port, err := netport.Free()
	if err != nil {
		return perftest.RPMAResult{}, err
	}
	addr, p := c.rpmaAddr, strconv.Itoa(port)
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	prog := func(side string, args ...string) program {
		if side == stackGo {
			// The same work as the C peer: Debian's librpma flushes
			// with a read on every kernel, where the Go peer would use
			// native RDMA FLUSH on 6.12.
			return c.goSide(append([]string{"rpma", "-emulated-flush"}, args...)...)
		}
		return program{path: c.rpmaPeer, args: args}
	}
	w := &lineWatch{ready: make(chan struct{})}
	cli, err := c.measured(iters, counts, func() (childOut, error) {
		return serverClient(ctx, srvSide, cliSide,
			prog(srvSide, "server", addr, p, strconv.Itoa(size)),
			prog(cliSide, "client", addr, p, test, strconv.Itoa(size), strconv.Itoa(iters)),
			w, w.ready)
	})
	if err != nil {
		return perftest.RPMAResult{}, err
	}
	r, err := perftest.ParseRPMAResult(cli.stdout)
	if err != nil {
		return r, fmt.Errorf("%s client output: %v", cliSide, err)
	}
	if err := validRPMA(r, test, size, iters); err != nil {
		return r, fmt.Errorf("%s client: %v", cliSide, err)
	}
	return r, nil
}

// validRPMA checks a client's result: the run asked for and a positive
// median.
func validRPMA(r perftest.RPMAResult, test string, size, iters int) error {
	if r.Test != test || r.Bytes != size || r.Iters != iters {
		return fmt.Errorf("result %v, want test=%s bytes=%d iters=%d", r, test, size, iters)
	}
	if math.IsNaN(r.MedianUS) || math.IsInf(r.MedianUS, 0) || r.MedianUS <= 0 {
		return fmt.Errorf("median %v", r.MedianUS)
	}
	return nil
}

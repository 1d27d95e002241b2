package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/purerdma/purerdma/internal/netport"
	"github.com/purerdma/purerdma/internal/perftest"
	"github.com/purerdma/purerdma/uverbs"
)

// Markers around compare's table, for hack/vm bench to find it on the
// guest's console; info lines carry the run's parameters.
const (
	benchBegin = "BENCH-BEGIN"
	benchEnd   = "BENCH-END"
	benchInfo  = "BENCH-INFO: "
)

// compareOpts are compare's flags.
type compareOpts struct {
	dev      string
	gidIdx   int    // -1: the GID of addr
	addr     string // the device's IPv4 address (-addr, $PURERDMA_RXE_ADDR)
	rounds   int
	sizes    []int
	iters    int // 0: the defaults below
	tests    []int
	cToolDir string
	timeout  time.Duration
	rpma     bool    // the rpma rows (rpmacompare.go)
	rpmaPeer string  // the C librpma program
	rpmaAddr string  // the server's address: addr
	rperf    string  // the Go side's program
	goEnv    envList // added to the Go side's environment
	aa       bool    // C in the Go column too (-aa)
	cross    bool    // each column's client against the other's server (-cross)
}

// roles are the stacks of the server and the client of side's runs:
// side's own; C for both with -aa, an A/A run that shows what the method
// alone makes of two equal stacks (the rounds' noise, and any bias of
// running first in a round, which the Go column always does); with
// -cross the column's client against the other stack's server, which
// tells whether a gap follows the client or the server.
func (c *compareOpts) roles(side string) (srv, cli string) {
	switch {
	case c.aa:
		return stackC, stackC
	case c.cross && side == stackGo:
		return stackC, stackGo
	case c.cross:
		return stackGo, stackC
	}
	return side, side
}

// envList is a repeatable NAME=value flag.
type envList []string

func (e *envList) String() string { return strings.Join(*e, " ") }

func (e *envList) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
		return fmt.Errorf("%q is not NAME=value", v)
	}
	*e = append(*e, v)
	return nil
}

// goFlags declares the Go side's flags on fs, -rperf and -goenv, and the
// device's address, -addr: in the VM PURERDMA_RXE_ADDR, which make
// test-native has no reason to set for a hardware device.
func (c *compareOpts) goFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.addr, "addr", os.Getenv("PURERDMA_RXE_ADDR"), "the device's IPv4 address: -x's default is its GID, the rpma rows' server listens on it (default $PURERDMA_RXE_ADDR)")
	fs.StringVar(&c.rperf, "rperf", besideSelf("rperf"), "the rperf program")
	fs.Var(&c.goEnv, "goenv", "NAME=value for the Go side's processes, e.g. GOMAXPROCS=1 (repeatable)")
}

// besideSelf is the program name in this program's directory, where
// hack/vm puts the project's commands (/opt/purerdma/bin), or name alone
// (looked up in PATH) when this program cannot find itself.
func besideSelf(name string) string {
	self, err := os.Executable()
	if err != nil {
		return name
	}
	return filepath.Join(filepath.Dir(self), name)
}

// Default iteration counts: small enough that the whole comparison runs in
// minutes under QEMU's TCG, large enough for a stable median.
const (
	defLatIters    = 1000
	defLatBigIters = 200 // latency tests from bigSize on
	defBWIters     = 2000
	defBWBigIters  = 500 // bandwidth tests from bigSize on
	bigSize        = 16384
	compareRetries = 3
)

// itersFor is the iteration count of one run.
func (c *compareOpts) itersFor(t perftest.Test, size int) int {
	switch {
	case c.iters > 0:
		return c.iters
	case t.Lat && size >= bigSize:
		return defLatBigIters
	case t.Lat:
		return defLatIters
	case size >= bigSize:
		return defBWBigIters
	}
	return defBWIters
}

func parseCompareArgs(args []string, stderr io.Writer) (*compareOpts, error) {
	fs := flag.NewFlagSet("benchcmp compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &compareOpts{}
	fs.StringVar(&c.dev, "d", "rxe0", "RDMA device")
	fs.IntVar(&c.gidIdx, "x", -1, "GID index (default: the one of -addr)")
	fs.IntVar(&c.rounds, "rounds", 9, "rounds per side (Go, C, Go, C...)")
	sizes := fs.String("sizes", "2,64,4096,65536", "message sizes, comma-separated")
	fs.IntVar(&c.iters, "n", 0, fmt.Sprintf("iterations per run (default: latency %d, bandwidth %d; from %d bytes %d and %d)",
		defLatIters, defBWIters, bigSize, defLatBigIters, defBWBigIters))
	testList := fs.String("tests", "all", "tests, comma-separated, or all")
	fs.StringVar(&c.cToolDir, "ctools", "/usr/bin", "directory of perftest's ib_* programs")
	fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "time limit of one run")
	c.goFlags(fs)
	fs.BoolVar(&c.cross, "cross", false, "the Go column runs Go's clients against C's servers, the C column C's clients against Go's servers: whether a gap follows the client or the server")
	fs.BoolVar(&c.aa, "aa", false, "A/A: run the C tools in the Go column too, to measure the method's noise (the table's Go column is then C run first in each round)")
	fs.BoolVar(&c.rpma, "rpma", true, "also compare the rpma package with librpma (rpma_* rows)")
	fs.StringVar(&c.rpmaPeer, "rpma-peer", defRPMAPeer, "the C librpma program of the rpma rows")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.rounds < 1 {
		return nil, errors.New("-rounds must be at least 1")
	}
	if c.aa && c.cross {
		return nil, errors.New("-aa and -cross choose the columns' stacks two ways: one at most")
	}
	if c.cross && !c.rpma {
		return nil, errors.New("-cross runs the rpma rows only: not with -rpma=false")
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > perftest.MaxAllSize {
			return nil, fmt.Errorf("invalid size %q", s)
		}
		c.sizes = append(c.sizes, n)
	}
	var err error
	c.tests, err = parseTests(*testList)
	return c, err
}

// parseTests reads a comma-separated list of tests, or "all", as indexes
// into tests.
func parseTests(list string) ([]int, error) {
	var ts []int
	if list == "all" {
		for i := range perftest.Tests {
			ts = append(ts, i)
		}
		return ts, nil
	}
	for _, name := range strings.Split(list, ",") {
		i, ok := perftest.Find(strings.TrimPrefix(strings.TrimSpace(name), "ib_"))
		if !ok {
			return nil, fmt.Errorf("unknown test %q", name)
		}
		ts = append(ts, i)
	}
	return ts, nil
}

// metric is one measured quantity of a test.
type metric struct {
	name  string
	lower bool // lower is better
	get   func(perftest.Result) float64
}

var (
	latMetric = metric{"t_typical usec (lower is better)", true, func(r perftest.Result) float64 { return r.TTypical }}
	bwMetric  = metric{"BW average MB/s (higher is better)", false, func(r perftest.Result) float64 {
		// The table's %.2f leaves little of small messages' bandwidth:
		// derive it from the message rate (%.6f) then.
		if r.BWAvg < 10 && r.MsgRate > 0 {
			return r.MsgRate * 1e6 * float64(r.Bytes) / perftest.MiB
		}
		return r.BWAvg
	}}
	rateMetric = metric{"MsgRate Mpps (higher is better)", false, func(r perftest.Result) float64 { return r.MsgRate }}
)

func metricsOf(t perftest.Test) []metric {
	if t.Lat {
		return []metric{latMetric}
	}
	return []metric{bwMetric, rateMetric}
}

// ratio is goV/cV, NaN when either is missing or cV is 0.
func ratio(goV, cV float64) float64 {
	if math.IsNaN(goV) || math.IsNaN(cV) || cV == 0 {
		return math.NaN()
	}
	return goV / cV
}

// valid counts the finite values in v.
func valid(v []float64) int { return len(perftest.Finite(v)) }

// row is one line of the table: all rounds of one metric.
type row struct {
	test   string
	bytes  int
	metric metric
	goV    []float64
	cV     []float64
	rounds int
}

// add appends one run's value (NaN for a failed run) to side's values.
func (r *row) add(side string, v float64) {
	if side == stackGo {
		r.goV = append(r.goV, v)
	} else {
		r.cV = append(r.cV, v)
	}
}

// goSide is rperf with args, in the Go side's environment.
func (c *compareOpts) goSide(args ...string) program {
	return program{path: c.rperf, args: args, env: c.goEnv}
}

// formatNum prints a value with 3 significant digits at least, "n/a" for
// NaN.
func formatNum(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case v == 0:
		return "0"
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case math.Abs(v) >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// roundsCell is "5", or "Go 4/5, C 5/5" when runs failed.
func roundsCell(r row) string {
	g, c := valid(r.goV), valid(r.cV)
	if g == r.rounds && c == r.rounds {
		return strconv.Itoa(r.rounds)
	}
	return fmt.Sprintf("Go %d/%d, C %d/%d", g, r.rounds, c, r.rounds)
}

// formatTable is the markdown table between the markers.
func formatTable(rows []row) string { return formatTables(rows, nil, nil) }

// counterHeading introduces the counter table.
const counterHeading = "What rxe counted per run (medians per message; the counters of the whole device, both sides of the loopback):"

// formatTables is the results table, the counter table when a counter
// row has values, and notes, between the markers.
func formatTables(rows, counts []row, notes []string) string {
	var b strings.Builder
	fmt.Fprintln(&b, benchBegin)
	writeTable(&b, rows)
	var shown []row
	for _, r := range counts {
		if valid(r.goV)+valid(r.cV) > 0 {
			shown = append(shown, r)
		}
	}
	if len(shown) > 0 {
		fmt.Fprintf(&b, "\n%s\n\n", counterHeading)
		writeTable(&b, shown)
	}
	if len(notes) > 0 {
		fmt.Fprintln(&b)
		for _, n := range notes {
			fmt.Fprintf(&b, "Note: %s\n", n)
		}
	}
	fmt.Fprintln(&b, benchEnd)
	return b.String()
}

// writeTable writes rows as a markdown table.
func writeTable(b *strings.Builder, rows []row) {
	fmt.Fprintln(b, "| test | bytes | metric | Go (median) | C (median) | Go/C | Go/C by round (IQR) | p | rounds |")
	fmt.Fprintln(b, "|---|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		g, c := perftest.Median(r.goV), perftest.Median(r.cV)
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", r.test, r.bytes, r.metric.name,
			formatNum(g), formatNum(c), formatRatio(ratio(g, c)), iqrCell(r), pCell(r), roundsCell(r))
	}
}

func formatRatio(q float64) string {
	if math.IsNaN(q) || math.IsInf(q, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(q, 'f', 2, 64)
}

// iqrCell is the interquartile range of the ratios of each round's Go
// and C runs, which ran one after the other: how far one round's
// comparison can be trusted. "n/a" with fewer than 3 such pairs.
func iqrCell(r row) string {
	var q []float64
	for i := range min(len(r.goV), len(r.cV)) {
		if v := ratio(r.goV[i], r.cV[i]); !math.IsNaN(v) && !math.IsInf(v, 0) {
			q = append(q, v)
		}
	}
	if len(q) < 3 {
		return "n/a"
	}
	slices.Sort(q)
	return formatRatio(quantile(q, 0.25)) + "–" + formatRatio(quantile(q, 0.75))
}

// quantile is the p-quantile of sorted s, interpolating between the two
// nearest ranks.
func quantile(s []float64, p float64) float64 {
	x := p * float64(len(s)-1)
	i := int(x)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (x-float64(i))*(s[i+1]-s[i])
}

// compare runs the Go and the C tools in turns and prints the table.
func compare(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parseCompareArgs(args, stderr)
	if err == nil {
		err = c.setup()
	}
	if err != nil {
		return fail(stderr, "compare", err)
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	fmt.Fprintf(stdout, "%skernel=%s\n", benchInfo, strings.TrimSpace(string(kernel)))
	fmt.Fprintf(stdout, "%sdevice=%s gid_index=%d rounds=%d sizes=%s\n", benchInfo, c.dev, c.gidIdx, c.rounds, joinInts(c.sizes))
	if len(c.goEnv) > 0 {
		fmt.Fprintf(stdout, "%sgo_env=%s\n", benchInfo, c.goEnv.String())
	}
	if c.aa {
		fmt.Fprintf(stdout, "%saa=C in both columns\n", benchInfo)
	}
	if c.cross {
		fmt.Fprintf(stdout, "%scross=Go clients against C servers, C clients against Go servers\n", benchInfo)
	}
	if c.iters > 0 {
		fmt.Fprintf(stdout, "%siterations=%d\n", benchInfo, c.iters)
	} else {
		fmt.Fprintf(stdout, "%siterations=latency %d, bandwidth %d; from %d bytes: latency %d, bandwidth %d\n", benchInfo,
			defLatIters, defBWIters, bigSize, defLatBigIters, defBWBigIters)
	}
	start := time.Now()
	tests := c.tests
	var crossNote []string
	if c.cross {
		// rperf and perftest each talk to their own kind over TCP
		// (rperf's exchange is its own), so only the rpma rows, whose
		// peers speak librpma's protocol, can be crossed.
		tests = nil
		crossNote = []string{"perftest rows left out: -cross pairs rperf with perftest, whose address exchanges differ; the rpma rows only"}
	}
	// Warm up: the first runs after boot are slower by far (the
	// translator's cache, the neighbour entries...); discard a pair of each.
	for _, side := range []string{stackGo, stackC} {
		if len(tests) == 0 {
			break
		}
		_, err := c.runPair(ctx, perftest.Tests[tests[0]], side, c.sizes[0], c.itersFor(perftest.Tests[tests[0]], c.sizes[0]), &runCounts{})
		fmt.Fprintf(stdout, "compare: warm-up %s: %v (%v)\n", side, err, time.Since(start).Round(time.Second))
	}
	var rows, counts []row
	for _, ti := range tests {
		t := perftest.Tests[ti]
		sizes := c.sizes
		if t.Name == "atomic_lat" {
			sizes = []int{8}
		}
		for _, size := range sizes {
			ms := metricsOf(t)
			rs := make([]row, len(ms))
			for i, m := range ms {
				rs[i] = row{test: t.Name, bytes: size, metric: m, rounds: c.rounds}
			}
			cs := counterRows(t.Name, size, c.rounds)
			iters := c.itersFor(t, size)
			for round := 1; round <= c.rounds; round++ {
				for _, side := range []string{stackGo, stackC} {
					var rc runCounts
					r, err := c.runPair(ctx, t, side, size, iters, &rc)
					addCounts(cs, side, rc, err != nil)
					line := fmt.Sprintf("compare: %s %d B round %d/%d %s:", t.Name, size, round, c.rounds, side)
					for i, m := range ms {
						v := math.NaN()
						if err == nil {
							v = m.get(r)
							line += " " + formatNum(v)
						}
						rs[i].add(side, v)
					}
					if err != nil {
						line += " failed: " + err.Error()
					}
					fmt.Fprintf(stdout, "%s (%v)\n", line, time.Since(start).Round(time.Second))
				}
			}
			rows = append(rows, rs...)
			counts = append(counts, cs...)
		}
	}
	c.rpmaAddr = c.addr
	rpmaRows, rpmaCounts, notes := c.compareRPMA(ctx, stdout, start)
	notes = append(crossNote, notes...)
	rows = append(rows, rpmaRows...)
	counts = append(counts, rpmaCounts...)
	fmt.Fprintf(stdout, "%selapsed=%v\n", benchInfo, time.Since(start).Round(time.Second))
	fmt.Fprint(stdout, formatTables(rows, counts, notes))
	for _, r := range rows {
		if valid(r.goV) == 0 || valid(r.cV) == 0 {
			fmt.Fprintf(stderr, "benchcmp compare: %s %d: no result from one side\n", r.test, r.bytes)
			return 1
		}
	}
	return 0
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// setup finds rperf, so that a wrong -rperf fails at once and not in
// every run, and sets gidIdx, when -x did not, to the GID of addr.
func (c *compareOpts) setup() error {
	path, err := exec.LookPath(c.rperf)
	if err != nil {
		return fmt.Errorf("no rperf: %v (give -rperf)", err)
	}
	c.rperf = path
	if c.gidIdx >= 0 {
		return nil
	}
	if c.gidIdx, err = gidOfAddr(c.dev, c.addr); err != nil {
		return fmt.Errorf("%v (give -x)", err)
	}
	return nil
}

// fail reports err of the subcommand cmd, unless it is -h's, and
// returns the exit code.
func fail(stderr io.Writer, cmd string, err error) int {
	if !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stderr, "benchcmp %s: %v\n", cmd, err)
	}
	return 1
}

// gidOfAddr is the index of the GID of addr on port 1 of dev.
func gidOfAddr(dev, addr string) (int, error) {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return 0, fmt.Errorf("no device address (-addr or PURERDMA_RXE_ADDR %q)", addr)
	}
	uc, err := uverbs.OpenName(dev)
	if err != nil {
		return 0, err
	}
	defer uc.Close()
	return uc.GIDIndex(1, a)
}

// runPair runs one server and client pair of side ("Go" or "C"), retrying
// a failed pair, and returns the client's result and, in counts, what the
// device counted during it.
func (c *compareOpts) runPair(ctx context.Context, t perftest.Test, side string, size, iters int, counts *runCounts) (perftest.Result, error) {
	return retry(ctx, func() (perftest.Result, error) { return c.runPairOnce(ctx, t, side, size, iters, counts) })
}

// retry calls f until it succeeds, compareRetries times at most.
func retry[T any](ctx context.Context, f func() (T, error)) (T, error) {
	var v T
	var err error
	for try := 0; try < compareRetries; try++ {
		if v, err = f(); err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	return v, err
}

func (c *compareOpts) runPairOnce(ctx context.Context, t perftest.Test, side string, size, iters int, counts *runCounts) (perftest.Result, error) {
	port, err := netport.Free()
	if err != nil {
		return perftest.Result{}, err
	}
	args := []string{"-d", c.dev, "-x", strconv.Itoa(c.gidIdx), "-n", strconv.Itoa(iters), "-p", strconv.Itoa(port), "-F"}
	if t.Name != "atomic_lat" {
		args = append(args, "-s", strconv.Itoa(size))
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	prog := func(stack string, args []string) program {
		if stack == stackGo {
			return c.goSide(append([]string{t.Name}, args...)...)
		}
		return program{path: c.cToolDir + "/ib_" + t.Name, args: args}
	}
	srvStack, cliStack := c.roles(side)
	cli, err := c.measured(iters, counts, func() (childOut, error) {
		return serverClient(ctx, srvStack, cliStack, prog(srvStack, args), prog(cliStack, append(slices.Clone(args), "127.0.0.1")), nil, portListening(ctx, port))
	})
	if err != nil {
		return perftest.Result{}, err
	}
	rs, err := perftest.ParseOutput(t.Name, cli.stdout)
	if err != nil {
		return perftest.Result{}, fmt.Errorf("%s client output: %v", side, err)
	}
	r := rs[0]
	if t.Lat && (math.IsInf(r.TTypical, 0) || math.IsNaN(r.TTypical) || r.TTypical <= 0) {
		// perftest under TCG sometimes measures no CPU frequency.
		return perftest.Result{}, fmt.Errorf("%s: no latency (t_typical %v)", side, r.TTypical)
	}
	if !t.Lat && !(r.MsgRate > 0) {
		// perftest's send_bw client now and then reports zeros.
		return perftest.Result{}, fmt.Errorf("%s: no message rate (%v)", side, r.MsgRate)
	}
	return r, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// rperf profile runs one pair of each side per test under `perf record
// -a` and prints where each side's samples went, between PROFILE-BEGIN and
// PROFILE-END (hack/vm profile writes it to PROFILE.md). It answers the
// question a Go/C ratio leaves open: which code, whose thread, which CPU
// time makes the difference.

const (
	profileBegin = "PROFILE-BEGIN"
	profileEnd   = "PROFILE-END"
)

type profileOpts struct {
	compareOpts
	perf   string
	size   int
	freq   int
	window string // perf report --time: the part of the recording analysed
	dir    string
	top    int
	loop   time.Duration
	// rpmaTests are the rpma_* tests asked for (rpmacompare.go's names).
	rpmaTests []string
}

func parseProfileArgs(args []string, stderr io.Writer) (*profileOpts, error) {
	fs := flag.NewFlagSet("rperf profile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	p := &profileOpts{}
	fs.StringVar(&p.dev, "d", "rxe0", "RDMA device")
	fs.IntVar(&p.gidIdx, "x", -1, "GID index (default: the one of $PURERDMA_RXE_ADDR)")
	fs.StringVar(&p.cToolDir, "ctools", "/usr/bin", "directory of perftest's ib_* programs")
	fs.DurationVar(&p.timeout, "timeout", 3*time.Minute, "time limit of one run")
	testList := fs.String("tests", "write_lat,send_lat,read_lat,send_bw,rpma_read", "tests, comma-separated: perftest's, or all of them, and rpma_read, rpma_write_flush, rpma_sendrecv")
	fs.IntVar(&p.size, "s", 64, "message size")
	fs.IntVar(&p.iters, "n", 0, "iterations of each profiled run (default: enough for -loop)")
	fs.DurationVar(&p.loop, "loop", 4*time.Second, "how long each profiled run's loop should last; a short run unprofiled before says how many iterations that is")
	fs.StringVar(&p.perf, "perf", "/usr/bin/perf", "the perf program")
	fs.IntVar(&p.freq, "F", 999, "samples per second and CPU")
	fs.StringVar(&p.window, "window", "30%-70%", "the part of each recording analysed (perf report --time), past start-up and before the end")
	fs.StringVar(&p.dir, "o", os.TempDir(), "directory for the perf.data files")
	fs.IntVar(&p.top, "top", 12, "symbols listed per side")
	p.goEnvFlag(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if p.size < 1 || p.size > maxAllSize || p.iters < 0 || p.freq < 1 || p.loop <= 0 {
		return nil, errors.New("-s, -F and -loop must be positive, -n not negative")
	}
	for _, name := range strings.Split(*testList, ",") {
		name = strings.TrimSpace(name)
		if t, ok := strings.CutPrefix(name, "rpma_"); ok && slices.Contains(rpmaTests, t) {
			p.rpmaTests = append(p.rpmaTests, t)
			continue
		}
		ts, err := parseTests(name)
		if err != nil {
			return nil, err
		}
		p.tests = append(p.tests, ts...)
	}
	p.rpmaPeer = defRPMAPeer
	return p, nil
}

// workload is one profiled test: its name, the C side's program and a
// run of a pair of either side.
type workload struct {
	t     testKind
	size  int
	cComm string
	run   func(ctx context.Context, side string, iters int) (Result, error)
}

// workloads are the tests to profile, perftest's then the rpma ones.
func (p *profileOpts) workloads() []workload {
	var ws []workload
	for _, ti := range p.tests {
		t := tests[ti]
		size := p.size
		if t.name == "atomic_lat" {
			size = 8
		}
		ws = append(ws, workload{t, size, commOf("ib_" + t.name), func(ctx context.Context, side string, iters int) (Result, error) {
			var rc runCounts
			return p.runPairOnce(ctx, t, side, size, iters, &rc)
		}})
	}
	for _, name := range p.rpmaTests {
		ws = append(ws, workload{testKind{name: "rpma_" + name, lat: true}, p.size, commOf(p.rpmaPeer), func(ctx context.Context, side string, iters int) (Result, error) {
			var rc runCounts
			r, err := p.runRPMAPairOnce(ctx, side, side, name, p.size, iters, &rc)
			return Result{TTypical: r.MedianUS}, err
		}})
	}
	return ws
}

// profile is rperf profile.
func profile(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	p, err := parseProfileArgs(args, stderr)
	if err == nil {
		err = p.defaultGID()
	}
	var self string
	if err == nil {
		self, err = os.Executable()
	}
	if err != nil {
		return fail(stderr, "profile", err)
	}
	var b strings.Builder
	fmt.Fprintln(&b, profileBegin)
	fmt.Fprintf(&b, "Each run: `perf record -F %d -a` around one server and client pair, %d bytes, with as many iterations as take about %v (a short run before says how many); analysed: the samples of the time slice %s of the recording (`perf report --time`), when both processes are in their loops, past start-up (perftest measures the CPU's clock for a while first). Shares are of all samples of both vCPUs in that slice, idle included.\n",
		p.freq, p.size, p.loop, p.window)
	if len(p.goEnv) > 0 {
		fmt.Fprintf(&b, "\nThe Go side ran with %s.\n", p.goEnv.String())
	}
	p.rpmaAddr = os.Getenv("PURERDMA_RXE_ADDR")
	failed := false
	for _, w := range p.workloads() {
		var prof [2]sideProfile
		for i, side := range []string{stackGo, stackC} {
			comm := commOf(self)
			if side == stackC {
				comm = w.cComm
			}
			prof[i], err = p.record(ctx, w, side, comm)
			fmt.Fprintf(stdout, "profile: %s %s: %v\n", w.t.name, side, err)
			if err != nil {
				failed = true
				prof[i].err = err
			}
		}
		writeProfile(&b, w.t.name, w.size, prof, p.top)
	}
	fmt.Fprintln(&b, profileEnd)
	fmt.Fprint(stdout, b.String())
	if failed {
		return 1
	}
	return 0
}

// commOf is the command name the kernel gives a program's threads: its
// file name, cut to 15 bytes.
func commOf(path string) string {
	c := filepath.Base(path)
	if len(c) > 15 {
		c = c[:15]
	}
	return c
}

// record runs one pair of side under perf record and reads the reports.
func (p *profileOpts) record(ctx context.Context, w workload, side string, comm string) (sideProfile, error) {
	t := w.t
	iters := p.iters
	if iters == 0 {
		cal, err := w.run(ctx, side, calibrationIters)
		if err != nil {
			return sideProfile{}, fmt.Errorf("calibration run: %v", err)
		}
		iters = itersForLoop(t, cal, p.loop)
	}
	data := filepath.Join(p.dir, fmt.Sprintf("rperf-%s-%s.data", t.name, side))
	defer os.Remove(data)
	var recErr bytes.Buffer
	rec := exec.CommandContext(ctx, p.perf, "record", "-q", "-F", strconv.Itoa(p.freq), "-a", "-o", data)
	rec.Stderr = &recErr
	if err := rec.Start(); err != nil {
		return sideProfile{}, err
	}
	// perf opens its events and mmaps its buffers before it samples.
	time.Sleep(500 * time.Millisecond)
	res, err := w.run(ctx, side, iters)
	rec.Process.Signal(os.Interrupt)
	if werr := rec.Wait(); !stoppedByInterrupt(werr) && err == nil {
		err = fmt.Errorf("perf record: %v: %s", werr, lastLine(recErr.String()))
	}
	if err != nil {
		return sideProfile{}, err
	}
	sp := sideProfile{comm: comm, result: res, iters: iters}
	for _, r := range []struct {
		sort string
		dst  *[]share
		self bool // only the tool's samples
	}{
		{"comm", &sp.comms, false},
		{"pid", &sp.threads, true},
		{"dso,sym", &sp.syms, true},
	} {
		args := []string{"report", "-i", data, "--stdio", "--time", p.window, "-t", ";", "--sort", r.sort}
		if r.self {
			args = append(args, "--comms", comm)
		}
		out, err := exec.CommandContext(ctx, p.perf, args...).Output()
		if err != nil {
			return sp, fmt.Errorf("perf report --sort %s: %v", r.sort, err)
		}
		*r.dst = parseReport(string(out))
	}
	if len(sp.comms) == 0 {
		return sp, fmt.Errorf("no samples in the slice %s", p.window)
	}
	return sp, nil
}

// stoppedByInterrupt tells whether perf record ended well on SIGINT: it
// writes its data, then raises the signal again to exit by it.
func stoppedByInterrupt(err error) bool {
	if err == nil {
		return true
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGINT
}

// calibrationIters is the length of the run that times an iteration.
const calibrationIters = 2000

// iterTime is the time of one iteration of t in µs, from a run's
// result: a round trip for the latency tests (perftest reports half of one
// for write_lat and send_lat, rperf rpma for sendrecv; all of it for the
// others), a message for the bandwidth tests; NaN without a figure.
func iterTime(t testKind, r Result) float64 {
	// The mean, not the median: CPU time per iteration is the recording's
	// time over the iterations in it. rperf rpma reports a median only.
	lat := r.TAvg
	if !(lat > 0) {
		lat = r.TTypical
	}
	switch {
	case t.name == "write_lat" || t.name == "send_lat" || t.name == "rpma_sendrecv":
		return 2 * lat
	case t.lat:
		return lat
	case r.MsgRate > 0:
		return 1 / r.MsgRate
	}
	return math.NaN()
}

// itersForLoop is how many iterations of t last about d, by the result of
// a shorter run.
func itersForLoop(t testKind, r Result, d time.Duration) int {
	per := iterTime(t, r)
	if !(per > 0) {
		return calibrationIters
	}
	return min(max(int(float64(d.Microseconds())/per), calibrationIters), 1<<22)
}

// share is one line of perf report -t ';': a percentage of all samples
// and the sort keys.
type share struct {
	pct  float64
	keys []string
}

// parseReport reads perf report --stdio -t ';' lines, "12.34% ;key;key".
func parseReport(out string) []share {
	var s []share
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ";")
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(f[0]), "%"), 64)
		if err != nil {
			continue
		}
		sh := share{pct: v}
		for _, k := range f[1:] {
			sh.keys = append(sh.keys, strings.TrimSpace(k))
		}
		s = append(s, sh)
	}
	return s
}

// sideProfile is what one side's recording showed.
type sideProfile struct {
	err     error
	comm    string // the tool's processes' command name
	result  Result
	iters   int
	comms   []share // by command: all samples
	threads []share // by thread: the tool's samples
	syms    []share // by dso and symbol: the tool's samples
}

// A category sorts the tool's samples by what ran.
type category struct {
	name string
	is   func(dso, sym string) bool
}

func isKernel(dso, sym string) bool { return strings.HasPrefix(sym, "[k] ") }

func isRXE(dso, sym string) bool {
	return isKernel(dso, sym) && (strings.Contains(dso, "rxe") || strings.HasPrefix(sym, "[k] rxe_"))
}

// schedSyms are the kernel's context switch and wake-up functions.
var schedSyms = []string{"finish_task_switch", "__schedule", "schedule", "__switch_to", "try_to_wake_up",
	"pick_next_task", "enqueue_task", "dequeue_task", "update_curr", "futex_", "do_futex", "switch_mm", "psi_task_"}

func isSched(dso, sym string) bool {
	if !isKernel(dso, sym) {
		return false
	}
	name := strings.TrimPrefix(sym, "[k] ")
	for _, p := range schedSyms {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// isTool tells rperf's own code (package main, or cmd/rperf in a test
// binary) and perftest's program apart from the libraries.
func isTool(dso, sym string) bool {
	return strings.HasPrefix(sym, "[.] main.") || strings.Contains(sym, "purerdma/purerdma/cmd/") || strings.HasPrefix(dso, "ib_")
}

func isRuntime(dso, sym string) bool { return strings.HasPrefix(sym, "[.] runtime.") }

// categories are checked in order; the first that matches takes a symbol.
var categories = []category{
	{"kernel: rxe (transport work in the doorbell and completions)", isRXE},
	{"kernel: scheduler (context switches, wake-ups, futexes)", isSched},
	{"kernel: other (system calls, memory, interrupts)", isKernel},
	{"user: Go runtime (runtime.*)", isRuntime},
	{"user: the tool's loop (rperf's main package; perftest's program)", isTool},
	{"user: RDMA stack (purerdma packages; libibverbs, rxe provider, librpma)", func(dso, sym string) bool {
		return strings.Contains(sym, "purerdma/purerdma/") ||
			strings.HasPrefix(dso, "libibverbs") || strings.HasPrefix(dso, "librxe") || strings.HasPrefix(dso, "librpma")
	}},
	{"user: other (libc, vDSO, ...)", func(dso, sym string) bool { return true }},
}

// rows are the profile table's rows for one side, in percent of all
// samples: the tool, its threads, its categories, then the rest of the
// machine.
func (sp sideProfile) rows() []float64 {
	var tool, idle, softirq, kworker, rest float64
	for _, c := range sp.comms {
		name := c.keys[0]
		switch {
		case name == sp.comm:
			tool += c.pct
		case name == "swapper":
			idle += c.pct
		case strings.HasPrefix(name, "ksoftirqd"):
			softirq += c.pct
		case strings.HasPrefix(name, "kworker"):
			kworker += c.pct
		default:
			rest += c.pct
		}
	}
	cats := make([]float64, len(categories))
	for _, s := range sp.syms {
		if len(s.keys) < 2 {
			continue
		}
		for i, c := range categories {
			if c.is(s.keys[0], s.keys[1]) {
				cats[i] += s.pct
				break
			}
		}
	}
	return append(append([]float64{tool}, cats...), softirq, kworker, idle, rest)
}

var profileRowNames = append(append([]string{
	"the tool's processes (server and client)",
}, func() []string {
	var n []string
	for _, c := range categories {
		n = append(n, "… "+c.name)
	}
	return n
}()...),
	"ksoftirqd (rxe's deferred work)", "kworker", "idle (swapper)", "everything else (perf, init...)")

// rxeRow is the row of rxe's kernel work in rows.
const rxeRow = 1

// perMessage compares what Go and C spend on one row per message, with
// rxe's work as the clock: it is the same per message whichever stack
// posted it, so a row's share over rxe's share is its cost per message in
// units of rxe's. (Median or mean iteration times would not do: a run's
// tail and its stalls lie partly outside the analysed slice.)
func perMessage(goV, goRXE, cV, cRXE float64) string {
	switch {
	case !(goRXE > 0) || !(cRXE > 0):
		return "n/a"
	case cV == 0 && goV == 0:
		return "–"
	case cV == 0:
		return "Go only"
	}
	return formatRatio((goV / goRXE) / (cV / cRXE))
}

// busyThreads counts the tool's threads with at least min percent of the
// samples: perftest's two, and with Go every thread the runtime moved a
// loop's goroutine to, or woke for its own work.
func (sp sideProfile) busyThreads(min float64) int {
	n := 0
	for _, t := range sp.threads {
		if t.pct >= min {
			n++
		}
	}
	return n
}

// threadList is the shares of the tool's threads with at least min
// percent of the samples, busiest first.
func (sp sideProfile) threadList(min float64) string {
	var v []float64
	for _, t := range sp.threads {
		if t.pct >= min {
			v = append(v, t.pct)
		}
	}
	slices.Sort(v)
	slices.Reverse(v)
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatFloat(x, 'f', 1, 64) + " %"
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// writeProfile writes one test's tables.
func writeProfile(b *strings.Builder, test string, size int, prof [2]sideProfile, top int) {
	fmt.Fprintf(b, "\n### %s, %d bytes\n\n", test, size)
	for i, side := range []string{stackGo, stackC} {
		if prof[i].err != nil {
			fmt.Fprintf(b, "%s: no profile: %v\n\n", side, prof[i].err)
		}
	}
	if prof[0].err != nil || prof[1].err != nil {
		return
	}
	fmt.Fprintf(b, "The profiled runs: Go %s (%d iterations), C %s (%d iterations). Threads with at least 1 %% of the samples: Go %d, C %d.\n\n",
		resultCell(prof[0].result), prof[0].iters, resultCell(prof[1].result), prof[1].iters, prof[0].busyThreads(1), prof[1].busyThreads(1))
	fmt.Fprintln(b, "| where the samples fell | Go | C | Go/C per message |")
	fmt.Fprintln(b, "|---|---:|---:|---:|")
	g, c := prof[0].rows(), prof[1].rows()
	for i, name := range profileRowNames {
		fmt.Fprintf(b, "| %s | %.1f %% | %.1f %% | %s |\n", name, g[i], c[i], perMessage(g[i], g[rxeRow], c[i], c[rxeRow]))
	}
	for i, side := range []string{stackGo, stackC} {
		fmt.Fprintf(b, "\n%s's busiest symbols (%s processes):\n\n", side, prof[i].comm)
		writeSyms(b, prof[i].syms, top, func(share) bool { return true })
	}
	for i, side := range []string{stackGo, stackC} {
		fmt.Fprintf(b, "\n%s's threads with at least 0.5 %% of the samples: %s\n", side, prof[i].threadList(0.5))
	}
	fmt.Fprintf(b, "\nThe Go runtime's busiest symbols:\n\n")
	writeSyms(b, prof[0].syms, top/2, func(s share) bool { return isRuntime(s.keys[0], s.keys[1]) })
}

// writeSyms lists the top symbols of syms that keep says to, busiest
// first.
func writeSyms(b *strings.Builder, syms []share, top int, keep func(share) bool) {
	syms = slices.Clone(syms)
	slices.SortStableFunc(syms, func(x, y share) int { return cmpDesc(x.pct, y.pct) })
	n := 0
	for _, s := range syms {
		if n == top {
			break
		}
		if len(s.keys) > 1 && keep(s) {
			fmt.Fprintf(b, "- %.1f %% `%s` (%s)\n", s.pct, strings.Join(s.keys[1:], " "), s.keys[0])
			n++
		}
	}
}

func cmpDesc(x, y float64) int {
	switch {
	case x > y:
		return -1
	case x < y:
		return 1
	}
	return 0
}

// resultCell is a run's figure: t_typical, or the message rate.
func resultCell(r Result) string {
	if r.MsgRate > 0 && r.TTypical == 0 {
		return formatNum(r.MsgRate) + " Mpps"
	}
	return formatNum(r.TTypical) + " µs typical"
}

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

	"github.com/purerdma/purerdma/internal/perftest"
)

// benchcmp profile runs one pair of each side per test under `perf record
// -a` and prints where each side's samples went, between PROFILE-BEGIN and
// PROFILE-END (hack/vm profile writes it to docs/profile-report.md, or
// docs/profile-report-linux-<series>.md for another kernel than 6.1). It
// answers the question a Go/C ratio leaves open: which code, whose
// thread, which CPU time makes the difference.

const (
	profileBegin = "PROFILE-BEGIN"
	profileEnd   = "PROFILE-END"
	// profileInfo starts the lines before the report that hack/vm profile
	// reads for the report's header, as it reads BENCH-INFO for bench's.
	profileInfo = "PROFILE-INFO: "
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
	// allowEmpty (-allow-empty) lets a side whose time slice holds no
	// samples pass: the report says so and the run still succeeds.
	allowEmpty bool
	// sched (-sched) records the scheduler's tracepoints instead of
	// cpu-clock samples and reports wake-ups, switches and idle time
	// (sched.go).
	sched bool
}

// errNoSamples is a recording whose analysed slice perf sampled nothing
// in: what perf catches of a short run in a slow guest is chance, so
// only make profile, which wants the profile, fails on it (see
// -allow-empty).
var errNoSamples = errors.New("no samples")

func parseProfileArgs(args []string, stderr io.Writer) (*profileOpts, error) {
	fs := flag.NewFlagSet("benchcmp profile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	p := &profileOpts{}
	fs.StringVar(&p.dev, "d", "rxe0", "RDMA device")
	fs.IntVar(&p.gidIdx, "x", -1, "GID index (default: the one of -addr)")
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
	fs.BoolVar(&p.allowEmpty, "allow-empty", false, "do not fail when a side's time slice has no samples (the tests' end-to-end run, whose short loop perf may miss); make profile leaves it off")
	fs.BoolVar(&p.sched, "sched", false, "trace the scheduler (perf record -e sched:*) instead of sampling: per message the tool's context switches and migrations, wake-up latency of kworkers, ksoftirqd and the tool's threads, the client's off-CPU time, each vCPU's idle time")
	p.goFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if p.size < 1 || p.size > perftest.MaxAllSize || p.iters < 0 || p.freq < 1 || p.loop <= 0 {
		return nil, errors.New("-s, -F and -loop must be positive, -n not negative")
	}
	if _, _, err := schedWindow(p.window); p.sched && err != nil {
		return nil, err
	}
	for _, name := range strings.Split(*testList, ",") {
		name = strings.TrimSpace(name)
		if t, ok := strings.CutPrefix(name, "rpma_"); ok && slices.Contains(perftest.RPMATests, t) {
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
	t     perftest.Test
	size  int
	cComm string
	run   func(ctx context.Context, side string, iters int) (perftest.Result, error)
}

// workloads are the tests to profile, perftest's then the rpma ones.
func (p *profileOpts) workloads() []workload {
	var ws []workload
	for _, ti := range p.tests {
		t := perftest.Tests[ti]
		size := p.size
		if t.Name == "atomic_lat" {
			size = 8
		}
		ws = append(ws, workload{t, size, commOf("ib_" + t.Name), func(ctx context.Context, side string, iters int) (perftest.Result, error) {
			var rc runCounts
			return p.runPairOnce(ctx, t, side, size, iters, &rc)
		}})
	}
	for _, name := range p.rpmaTests {
		ws = append(ws, workload{perftest.Test{Name: "rpma_" + name, Lat: true}, p.size, commOf(p.rpmaPeer), func(ctx context.Context, side string, iters int) (perftest.Result, error) {
			var rc runCounts
			r, err := p.runRPMAPairOnce(ctx, side, side, name, p.size, iters, &rc)
			return perftest.Result{TTypical: r.MedianUS}, err
		}})
	}
	return ws
}

// profile is benchcmp profile.
func profile(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	p, err := parseProfileArgs(args, stderr)
	if err == nil {
		err = p.setup()
	}
	if err != nil {
		return fail(stderr, "profile", err)
	}
	if p.sched {
		return p.schedProfile(ctx, stdout)
	}
	osrelease, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	writeProfileInfo(stdout, string(osrelease))
	var b strings.Builder
	fmt.Fprintln(&b, profileBegin)
	fmt.Fprintf(&b, "Each run: `perf record -F %d -a` around one server and client pair, %d bytes, with as many iterations as take about %v (a short run before says how many); analysed: the samples of the time slice %s of the recording (`perf report --time`), when both processes are in their loops, past start-up (perftest measures the CPU's clock for a while first). Shares are of all samples of both vCPUs in that slice, idle included.\n",
		p.freq, p.size, p.loop, p.window)
	if len(p.goEnv) > 0 {
		fmt.Fprintf(&b, "\nThe Go side ran with %s.\n", p.goEnv.String())
	}
	p.rpmaAddr = p.addr
	failed := false
	for _, w := range p.workloads() {
		var prof [2]sideProfile
		for i, side := range []string{stackGo, stackC} {
			comm := commOf(p.rperf)
			if side == stackC {
				comm = w.cComm
			}
			prof[i], err = p.record(ctx, w, side, comm)
			fmt.Fprintf(stdout, "profile: %s %s: %v\n", w.t.Name, side, err)
			if err != nil {
				failed = failed || fails(err, p.allowEmpty)
				prof[i].err = err
			}
		}
		writeProfile(&b, w.t.Name, w.size, prof, p.top)
	}
	fmt.Fprintln(&b, profileEnd)
	fmt.Fprint(stdout, b.String())
	if failed {
		return 1
	}
	return 0
}

// writeProfileInfo prints the PROFILE-INFO lines: the guest's kernel
// release (osrelease, as /proc/sys/kernel/osrelease has it), which names
// the report's kernel beside the series the harness was asked for.
func writeProfileInfo(w io.Writer, osrelease string) {
	if k := strings.TrimSpace(osrelease); k != "" {
		fmt.Fprintf(w, "%skernel=%s\n", profileInfo, k)
	}
}

// fails tells whether a side's error fails the run: every error does,
// but a slice without samples when -allow-empty is given.
func fails(err error, allowEmpty bool) bool {
	return err != nil && !(allowEmpty && errors.Is(err, errNoSamples))
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
	return calibrated(ctx, p, w, side, func(iters int) (sideProfile, error) {
		return p.recordOnce(ctx, w, side, comm, iters)
	})
}

// calibrated runs once with the iterations a calibration run gives for
// p's loop (or -n's). A recording whose slice missed the tool's loop (the
// run was short against perf's start-up, or a stall in the calibration
// run made it so) is made once more with four times the iterations,
// unless -n fixed them. record and recordSched share it.
func calibrated[T any](ctx context.Context, p *profileOpts, w workload, side string, once func(iters int) (T, error)) (T, error) {
	iters := p.iters
	if iters == 0 {
		cal, err := w.run(ctx, side, calibrationIters)
		if err != nil {
			var zero T
			return zero, fmt.Errorf("calibration run: %v", err)
		}
		iters = itersForLoop(w.t, cal, p.loop)
	}
	r, err := once(iters)
	if errors.Is(err, errNoSamples) && p.iters == 0 && iters < maxIters {
		retry := min(4*iters, maxIters)
		fmt.Fprintf(os.Stderr, "profile: %s %s: %v; again with %d iterations\n", w.t.Name, side, err, retry)
		r, err = once(retry)
	}
	return r, err
}

// runRecorded runs one pair of side with iters iterations while `perf
// args...` records, and returns its result, how long the pair took and
// perf's standard error.
func (p *profileOpts) runRecorded(ctx context.Context, w workload, side string, iters int, args ...string) (perftest.Result, time.Duration, string, error) {
	var recErr bytes.Buffer
	rec := exec.CommandContext(ctx, p.perf, args...)
	rec.Stderr = &recErr
	if err := rec.Start(); err != nil {
		return perftest.Result{}, 0, "", err
	}
	// perf opens its events and mmaps its buffers before it records.
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	res, err := w.run(ctx, side, iters)
	took := time.Since(start)
	rec.Process.Signal(os.Interrupt)
	if werr := rec.Wait(); !stoppedByInterrupt(werr) && err == nil {
		err = fmt.Errorf("perf record: %v: %s", werr, lastLine(recErr.String()))
	}
	return res, took, recErr.String(), err
}

// recordOnce runs one pair of side with iters iterations under perf
// record and reads the reports.
func (p *profileOpts) recordOnce(ctx context.Context, w workload, side string, comm string, iters int) (sideProfile, error) {
	t := w.t
	data := filepath.Join(p.dir, fmt.Sprintf("rperf-%s-%s.data", t.Name, side))
	defer os.Remove(data)
	res, took, _, err := p.runRecorded(ctx, w, side, iters, "record", "-q", "-F", strconv.Itoa(p.freq), "-a", "-o", data)
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
		{"dso,sym", &sp.allSyms, false},
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
	// The run's length says whether perf could have seen its loop.
	run := fmt.Sprintf("a run of %d iterations, %v", iters, took.Round(time.Millisecond))
	if len(sp.comms) == 0 {
		return sp, fmt.Errorf("%w in the slice %s (%s)", errNoSamples, p.window, run)
	}
	// A slice without the tool's own processes missed the loop it was
	// meant to show.
	if sp.rows()[0] == 0 {
		return sp, fmt.Errorf("%w of %s in the slice %s (%s)", errNoSamples, comm, p.window, run)
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
func iterTime(t perftest.Test, r perftest.Result) float64 {
	// The median, not the mean: one stall of the short calibration run
	// (a loaded host stops the guest for tens of milliseconds) moves the
	// mean of 2000 iterations by several times the typical one, and the
	// loop sized by it was then too short for perf to see (Linux 6.12,
	// 2026-11-28). By the median the loop lasts at least about -loop.
	lat := r.TTypical
	if !(lat > 0) {
		lat = r.TAvg
	}
	switch {
	case t.Name == "write_lat" || t.Name == "send_lat" || t.Name == "rpma_sendrecv":
		return 2 * lat
	case t.Lat:
		return lat
	case r.MsgRate > 0:
		return 1 / r.MsgRate
	}
	return math.NaN()
}

// itersForLoop is how many iterations of t last about d, by the result of
// a shorter run.
func itersForLoop(t perftest.Test, r perftest.Result, d time.Duration) int {
	per := iterTime(t, r)
	if !(per > 0) {
		return calibrationIters
	}
	return min(max(int(float64(d.Microseconds())/per), calibrationIters), maxIters)
}

// maxIters caps a profiled run's iterations.
const maxIters = 1 << 22

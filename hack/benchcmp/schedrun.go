package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// schedProfile is benchcmp profile -sched: each test's pairs under the
// scheduler's tracepoints, one table per test between PROFILE-BEGIN and
// PROFILE-END.
func (p *profileOpts) schedProfile(ctx context.Context, stdout io.Writer) int {
	if err := mountTracefs(); err != nil {
		fmt.Fprintf(os.Stderr, "profile: tracefs: %v (perf may mount it itself)\n", err)
	}
	stop, err := p.holdTracepoints(ctx)
	if err != nil {
		return fail(os.Stderr, "profile", err)
	}
	defer stop()
	osrelease, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	writeProfileInfo(stdout, string(osrelease))
	var b strings.Builder
	fmt.Fprintln(&b, profileBegin)
	fmt.Fprintf(&b, "A counting `perf stat -a` of the same events runs throughout, so that the tracepoints are patched in once, before the first run (patching them while a run's wake-ups go through them crashed the TCG guest). Each run: `perf record -a -e %s` around one server and client pair, %d bytes, with as many iterations as take about %v (a short run before says how many); analysed: the events of the time slice %s of the trace (`perf script`, read by benchcmp), when both processes are in their loops. \"Per message\" divides by the messages in the slice: its length over the run's mean iteration time (perftest and rperf), or, for the rpma tools, which report only the median, over the run's wall time per iteration, start-up included (so a little long, and the per-message figures a little high). The client is the tool's process with the highest pid (the server starts first). A wake-up's latency is from `sched_wakeup` to the `sched_switch` that puts the task on a vCPU. perf's own process is in the trace too: it wakes to empty its buffers.\n",
		strings.Join(schedEvents, ","), p.size, p.loop, p.window)
	if len(p.goEnv) > 0 {
		fmt.Fprintf(&b, "\nThe Go side ran with %s.\n", p.goEnv.String())
	}
	p.rpmaAddr = p.addr
	failed := false
	for _, w := range p.workloads() {
		var s [2]schedSide
		for i, side := range []string{stackGo, stackC} {
			comm := commOf(p.rperf)
			if side == stackC {
				comm = w.cComm
			}
			var err error
			s[i], err = p.recordSched(ctx, w, side, comm)
			fmt.Fprintf(stdout, "profile: %s %s: %v\n", w.t.Name, side, err)
			if err != nil {
				failed = failed || fails(err, p.allowEmpty)
				s[i].err = err
			}
		}
		// Each table as soon as it is made too: a guest that dies later
		// keeps it in the console's log.
		var t strings.Builder
		writeSched(&t, w.t.Name, w.size, s)
		fmt.Fprint(stdout, t.String())
		b.WriteString(t.String())
	}
	fmt.Fprintln(&b, profileEnd)
	fmt.Fprint(stdout, b.String())
	if failed {
		return 1
	}
	return 0
}

// holdTracepoints keeps perf's probe on the scheduler's tracepoints for
// the whole run with a counting `perf stat -a`, so that no recording
// patches the kernel's text when it starts or stops: attaching the first
// probe to a tracepoint rewrites its static key and static call with int3
// breakpoints, and under QEMU's multi-threaded TCG the other vCPU, busy in
// try_to_wake_up, hit such an int3 after the patching was done ("Oops:
// int3" in ttwu_do_activate, a panic; Linux 6.12, 2026-11-28). Patched
// once here, the tracepoints stay as they are until the end.
func (p *profileOpts) holdTracepoints(ctx context.Context) (stop func(), err error) {
	args := []string{"stat", "-a", "-o", os.DevNull}
	for _, e := range schedEvents {
		args = append(args, "-e", e)
	}
	hold := exec.CommandContext(ctx, p.perf, args...)
	var errOut bytes.Buffer
	hold.Stderr = &errOut
	if err := hold.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- hold.Wait() }()
	select {
	case err := <-done:
		return nil, fmt.Errorf("perf stat: %v: %s", err, lastLine(errOut.String()))
	case <-time.After(time.Second):
	}
	return func() {
		hold.Process.Signal(os.Interrupt)
		<-done
	}, nil
}

// recordSched is record's counterpart under -sched: a calibration run,
// then the traced run, once more with four times the iterations when the
// slice holds no event of the tool's threads (calibrated).
func (p *profileOpts) recordSched(ctx context.Context, w workload, side, comm string) (schedSide, error) {
	return calibrated(ctx, p, w, side, func(iters int) (schedSide, error) {
		return p.recordSchedOnce(ctx, w, side, comm, iters)
	})
}

func (p *profileOpts) recordSchedOnce(ctx context.Context, w workload, side, comm string, iters int) (schedSide, error) {
	data := filepath.Join(p.dir, fmt.Sprintf("rperf-sched-%s-%s.data", w.t.Name, side))
	defer os.Remove(data)
	// Large buffers (-m, pages per vCPU): perf wakes to write them out
	// less often, and a busy second of wake-ups is not lost.
	args := []string{"record", "-a", "-m", "2048", "-o", data}
	for _, e := range schedEvents {
		args = append(args, "-e", e)
	}
	res, took, recErr, err := p.runRecorded(ctx, w, side, iters, args...)
	if err != nil {
		return schedSide{}, err
	}
	s := schedSide{comm: comm, result: res, iters: iters, took: float64(took.Microseconds())}
	s.lost = lostLine(recErr)
	var scriptErr bytes.Buffer
	script := exec.CommandContext(ctx, p.perf, "script", "-i", data, "-F", schedScriptFields)
	script.Stderr = &scriptErr
	out, err := script.StdoutPipe()
	if err != nil {
		return s, err
	}
	if err := script.Start(); err != nil {
		return s, err
	}
	evs, perr := parseSched(out, comm)
	if err := script.Wait(); err != nil || perr != nil {
		return s, fmt.Errorf("perf script: %v %v: %s", err, perr, lastLine(scriptErr.String()))
	}
	if s.lost == "" {
		s.lost = lostLine(scriptErr.String())
	}
	lo, hi, _ := schedWindow(p.window)
	s.stats = analyseSched(evs, lo, hi)
	s.msgs = s.stats.slice / msgTime(w.t, res, s.took, iters)
	run := fmt.Sprintf("a run of %d iterations, %v, %d events", iters, took.Round(time.Millisecond), len(evs))
	if s.stats.toolEvents == 0 {
		return s, fmt.Errorf("%w of %s in the slice %s (%s)", errNoSamples, comm, p.window, run)
	}
	fmt.Fprintf(os.Stderr, "profile: %s %s: %s\n", w.t.Name, side, run)
	return s, nil
}

// lostLine is perf's warning of lost events in its output, if any.
func lostLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(strings.ToLower(l), "lost") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

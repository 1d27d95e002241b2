package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/purerdma/purerdma/internal/perftest"
)

// benchcmp profile -sched: the same pairs under `perf record -e` of the
// scheduler's tracepoints instead of cpu-clock samples. Samples say where
// the CPU time went; they cannot say how long a woken task waited for a
// vCPU, nor how long the spinning client was off one. On Linux 6.12 every
// message needs rxe's kworker to run after the doorbell (docs/profile.md),
// so that wait is the question: whose is it.

// schedEvents are the tracepoints recorded.
var schedEvents = []string{"sched:sched_switch", "sched:sched_wakeup", "sched:sched_migrate_task"}

// schedScriptFields is perf script's -F for the parser below.
const schedScriptFields = "comm,pid,tid,cpu,time,event,trace"

// Task classes: whose a task is, by its command name.
const (
	classOther = iota
	classTool  // the tool's processes (rperf, ib_*, the rpma peer)
	classKworker
	classSoftirq // ksoftirqd: rxe's tasklets on 6.1
	classIdle    // the idle task, pid 0
)

func taskClass(comm string, pid int, tool string) int {
	switch {
	case pid == 0:
		return classIdle
	case comm == tool:
		return classTool
	case strings.HasPrefix(comm, "kworker/"):
		return classKworker
	case strings.HasPrefix(comm, "ksoftirqd/"):
		return classSoftirq
	}
	return classOther
}

const (
	evSwitch = iota + 1
	evWakeup
	evMigrate
)

// schedEvent is one line of perf script, reduced to what the figures need.
type schedEvent struct {
	t    float64 // seconds
	cpu  int
	kind int
	// sched_switch: the task leaving and the one coming in; prevRunnable
	// is a preemption (prev_state R), not a sleep.
	prev, next             int
	prevClass, nextClass   int
	prevRunnable           bool
	pid, class             int // sched_wakeup, sched_migrate_task: the task
	hdrPid, hdrTid, hdrCls int // the task that was current
}

// schedLine is perf script's line with -F comm,pid,tid,cpu,time,event,trace:
// "  rperf   512/514   [001]   123.456789: sched:sched_switch: prev_comm=...".
var schedLine = regexp.MustCompile(`^\s*(.*?)\s+(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+(\d+\.\d+):\s+([\w:]+):\s*(.*)$`)

// traceFields splits a tracepoint's text, "prev_comm=a b prev_pid=1 ...
// ==> next_comm=c", into its key=value pairs; a value runs to the next
// " key=", so a command name may hold spaces.
var traceKey = regexp.MustCompile(`(?:^|\s)(\w+)=`)

func traceFields(s string) map[string]string {
	f := map[string]string{}
	idx := traceKey.FindAllStringSubmatchIndex(s, -1)
	for i, m := range idx {
		end := len(s)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		v := strings.TrimSpace(s[m[1]:end])
		f[s[m[2]:m[3]]] = strings.TrimSpace(strings.TrimSuffix(v, "==>"))
	}
	return f
}

// parseSchedLine reads one line; ok is false for lines that are not one
// of the recorded events.
func parseSchedLine(line, tool string) (ev schedEvent, ok bool) {
	m := schedLine.FindStringSubmatch(line)
	if m == nil {
		return ev, false
	}
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	ev.hdrPid, ev.hdrTid, ev.cpu = num(m[2]), num(m[3]), num(m[4])
	ev.hdrCls = taskClass(m[1], ev.hdrTid, tool)
	ev.t, _ = strconv.ParseFloat(m[5], 64)
	f := traceFields(m[7])
	switch m[6] {
	case "sched:sched_switch":
		ev.kind = evSwitch
		ev.prev, ev.next = num(f["prev_pid"]), num(f["next_pid"])
		ev.prevClass = taskClass(f["prev_comm"], ev.prev, tool)
		ev.nextClass = taskClass(f["next_comm"], ev.next, tool)
		ev.prevRunnable = strings.HasPrefix(f["prev_state"], "R")
	case "sched:sched_wakeup":
		ev.kind = evWakeup
		ev.pid = num(f["pid"])
		ev.class = taskClass(f["comm"], ev.pid, tool)
	case "sched:sched_migrate_task":
		ev.kind = evMigrate
		ev.pid = num(f["pid"])
		ev.class = taskClass(f["comm"], ev.pid, tool)
	default:
		return ev, false
	}
	return ev, true
}

// parseSched reads perf script's output.
func parseSched(r io.Reader, tool string) ([]schedEvent, error) {
	var evs []schedEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if ev, ok := parseSchedLine(sc.Text(), tool); ok {
			evs = append(evs, ev)
		}
	}
	return evs, sc.Err()
}

// schedStats are one side's figures over the analysed slice.
type schedStats struct {
	slice      float64 // µs
	span       float64 // µs, first to last event
	toolEvents int     // events of the tool's threads in the slice
	switches   int     // the tool's threads switched out
	preempted  int     // of which still runnable (involuntary)
	migrations int     // the tool's threads moved to another vCPU
	wake       map[int][]float64
	// kworkerWaitBehind is the kworkers' wake-up wait (µs) by the class of
	// the task they took the vCPU from: a wait behind the tool's thread
	// is a vCPU our process held; behind the idle task, a vCPU that was
	// idle and took that long to run it (the guest's and QEMU's wake-up).
	kworkerWaitBehind map[int]float64
	// switchTo counts the tool's switches by the class of the task that
	// came in: a kworker (rxe's work), the tool's own thread, idle.
	switchTo map[int]int
	// clientWakes counts the client's threads' wake-ups by thread, as the
	// thread id less the process id: in a Go program +1 is the first
	// thread the runtime starts, sysmon.
	clientWakes map[int]int
	// clientOn is each client thread's time on a vCPU in the slice (µs),
	// and kworkerBehindClient the kworkers' wait that ended by switching
	// out that thread, both by thread id less process id: which of Go's
	// threads, the one running the loop or another, held the vCPU.
	clientOn, kworkerBehindClient map[int]float64
	clientPid                     int
	clientTids                    int     // the client's threads that ran in the slice
	clientOff                     float64 // µs of the slice with no thread of the client on a vCPU
	idle                          []float64
	unmatchedWk                   int // wake-ups in the slice never followed by a switch-in
}

// schedWindow reads a perf --time style "30%-70%" as fractions.
func schedWindow(s string) (lo, hi float64, err error) {
	a, b, ok := strings.Cut(s, "-")
	if ok {
		lo, err = strconv.ParseFloat(strings.TrimSuffix(a, "%"), 64)
	}
	if ok && err == nil {
		hi, err = strconv.ParseFloat(strings.TrimSuffix(b, "%"), 64)
	}
	if !ok || err != nil || !strings.HasSuffix(a, "%") || !strings.HasSuffix(b, "%") || lo < 0 || hi > 100 || lo >= hi {
		return 0, 0, fmt.Errorf("window %q: want percentages, as 30%%-70%%", s)
	}
	return lo / 100, hi / 100, nil
}

// analyseSched computes the figures over the slice lo..hi (fractions) of
// the trace's span. The client is the tool's process with the highest
// pid: the harness starts the server first.
func analyseSched(evs []schedEvent, lo, hi float64) schedStats {
	st := schedStats{wake: map[int][]float64{}, kworkerWaitBehind: map[int]float64{}, switchTo: map[int]int{}, clientWakes: map[int]int{},
		clientOn: map[int]float64{}, kworkerBehindClient: map[int]float64{}}
	if len(evs) == 0 {
		return st
	}
	start, end := evs[0].t, evs[len(evs)-1].t
	w0, w1 := start+lo*(end-start), start+hi*(end-start)
	st.slice, st.span = (w1-w0)*1e6, (end-start)*1e6
	in := func(t float64) bool { return t >= w0 && t <= w1 }
	overlap := func(a, b float64) float64 { return max(0, min(b, w1)-max(a, w0)) }

	tgid := map[int]int{} // the tool's threads' processes
	ncpu := 0
	for _, e := range evs {
		if e.hdrCls == classTool {
			tgid[e.hdrTid] = e.hdrPid
			st.clientPid = max(st.clientPid, e.hdrPid)
		}
		ncpu = max(ncpu, e.cpu+1)
	}
	isClient := func(tid int) bool { p, ok := tgid[tid]; return ok && p == st.clientPid }

	type running struct {
		tid   int
		since float64
		known bool
	}
	cur := make([]running, ncpu)
	st.idle = make([]float64, ncpu)
	var clientRuns [][2]float64
	clientTids := map[int]bool{}
	type pending struct {
		t     float64
		class int
	}
	woken := map[int]pending{}
	onCPU := map[int]bool{} // tids current on a vCPU, the idle task aside
	closeRun := func(cpu, tid int, t float64) {
		since := start
		if cur[cpu].known {
			since = cur[cpu].since
		}
		if tid == 0 {
			st.idle[cpu] += overlap(since, t) * 1e6
		}
		if isClient(tid) && overlap(since, t) > 0 {
			clientRuns = append(clientRuns, [2]float64{max(since, w0), min(t, w1)})
			clientTids[tid] = true
			st.clientOn[tid-st.clientPid] += overlap(since, t) * 1e6
		}
	}
	for _, e := range evs {
		if in(e.t) && (e.hdrCls == classTool || e.class == classTool || e.prevClass == classTool || e.nextClass == classTool) {
			st.toolEvents++
		}
		switch e.kind {
		case evSwitch:
			closeRun(e.cpu, e.prev, e.t)
			cur[e.cpu] = running{e.next, e.t, true}
			// A wake-up of a task still on its vCPU (it had not yet
			// switched out to sleep) waits for nothing.
			delete(onCPU, e.prev)
			delete(woken, e.prev)
			if e.next != 0 {
				onCPU[e.next] = true
			}
			if in(e.t) && e.prevClass == classTool {
				st.switches++
				st.switchTo[e.nextClass]++
				if e.prevRunnable {
					st.preempted++
				}
			}
			if w, ok := woken[e.next]; ok {
				delete(woken, e.next)
				if in(w.t) {
					st.wake[w.class] = append(st.wake[w.class], (e.t-w.t)*1e6)
					if w.class == classKworker {
						st.kworkerWaitBehind[e.prevClass] += (e.t - w.t) * 1e6
						if isClient(e.prev) {
							st.kworkerBehindClient[e.prev-st.clientPid] += (e.t - w.t) * 1e6
						}
					}
				}
			}
		case evWakeup:
			if in(e.t) && isClient(e.pid) && !onCPU[e.pid] {
				st.clientWakes[e.pid-st.clientPid]++
			}
			if _, ok := woken[e.pid]; !ok && !onCPU[e.pid] {
				woken[e.pid] = pending{e.t, e.class}
			}
		case evMigrate:
			if in(e.t) && e.class == classTool {
				st.migrations++
			}
		}
	}
	for cpu, r := range cur {
		if r.known {
			closeRun(cpu, r.tid, end)
		}
	}
	for _, w := range woken {
		if in(w.t) {
			st.unmatchedWk++
		}
	}
	st.clientTids = len(clientTids)
	st.clientOff = st.slice - unionLen(clientRuns)*1e6
	return st
}

// unionLen is the length covered by the intervals.
func unionLen(iv [][2]float64) float64 {
	slices.SortFunc(iv, func(x, y [2]float64) int { return cmpAsc(x[0], y[0]) })
	var sum, hiEnd float64
	first := true
	for _, v := range iv {
		switch {
		case first || v[0] > hiEnd:
			sum += v[1] - v[0]
			hiEnd, first = v[1], false
		case v[1] > hiEnd:
			sum += v[1] - hiEnd
			hiEnd = v[1]
		}
	}
	return sum
}

func cmpAsc(x, y float64) int { return -cmpDesc(x, y) }

// pct is the q-quantile of v (compare.go's quantile over a sorted
// copy), NaN when v is empty.
func pct(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return quantile(s, q)
}

// msgTime is the time of one iteration in µs for counting the slice's
// messages: the mean where the tool reports one (a stall is part of the
// slice too), else (rperf rpma, the librpma peer, which report the median
// alone) the run's wall time over its iterations, start-up included: under
// a loaded host the median is several times shorter than the mean, and the
// slice's messages counted by it came out more than the run's iterations.
func msgTime(t perftest.Test, r perftest.Result, took float64, iters int) float64 {
	if r.TAvg > 0 {
		r.TTypical = r.TAvg
		return iterTime(t, r)
	}
	return took / float64(iters)
}

// schedSide is one side's recording under -sched.
type schedSide struct {
	err    error
	comm   string
	result perftest.Result
	iters  int
	took   float64 // µs, the whole run
	msgs   float64 // messages in the slice
	stats  schedStats
	lost   string // perf's warning of lost events, if any
}

// writeSched writes one test's table.
func writeSched(b *strings.Builder, test string, size int, s [2]schedSide) {
	fmt.Fprintf(b, "\n### %s, %d bytes\n\n", test, size)
	for i, side := range []string{stackGo, stackC} {
		if s[i].err != nil {
			fmt.Fprintf(b, "%s: no trace: %v\n\n", side, s[i].err)
		}
	}
	if s[0].err != nil || s[1].err != nil {
		return
	}
	fmt.Fprintf(b, "The traced runs: Go %s (%d iterations in %.1f s; trace %.1f s, slice %.1f s), C %s (%d iterations in %.1f s; trace %.1f s, slice %.1f s).",
		resultCell(s[0].result), s[0].iters, s[0].took/1e6, s[0].stats.span/1e6, s[0].stats.slice/1e6,
		resultCell(s[1].result), s[1].iters, s[1].took/1e6, s[1].stats.span/1e6, s[1].stats.slice/1e6)
	for i, side := range []string{stackGo, stackC} {
		if s[i].lost != "" {
			fmt.Fprintf(b, " %s: perf: %s.", side, s[i].lost)
		}
	}
	fmt.Fprintf(b, "\n\n| per message, in the slice | Go | C | Go/C |\n|---|---:|---:|---:|\n")
	row := func(name string, f func(schedSide) float64, prec int) {
		g, c := f(s[0]), f(s[1])
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", name, fnum(g, prec), fnum(c, prec), fnum(ratio(g, c), 2))
	}
	per := func(n func(schedStats) float64) func(schedSide) float64 {
		return func(x schedSide) float64 { return n(x.stats) / x.msgs }
	}
	row("messages in the slice", func(x schedSide) float64 { return x.msgs }, 0)
	row("context switches of the tool's threads", per(func(st schedStats) float64 { return float64(st.switches) }), 3)
	row("of which preempted (still runnable)", per(func(st schedStats) float64 { return float64(st.preempted) }), 3)
	for _, c := range []struct {
		name  string
		class int
	}{{"a kworker", classKworker}, {"the tool's own thread", classTool}, {"idle", classIdle}, {"another task", classOther}} {
		row("of which to "+c.name, per(func(st schedStats) float64 { return float64(st.switchTo[c.class]) }), 3)
	}
	row("migrations of the tool's threads", per(func(st schedStats) float64 { return float64(st.migrations) }), 3)
	for _, c := range []struct {
		name  string
		class int
	}{{"kworker", classKworker}, {"ksoftirqd", classSoftirq}, {"the tool's threads", classTool}} {
		row(c.name+" wake-ups", per(func(st schedStats) float64 { return float64(len(st.wake[c.class])) }), 3)
		row(c.name+" wake-up to running, median µs", func(x schedSide) float64 { return pct(x.stats.wake[c.class], 0.5) }, 1)
		row(c.name+" wake-up to running, p90 µs", func(x schedSide) float64 { return pct(x.stats.wake[c.class], 0.9) }, 1)
		row(c.name+" wake-up to running, all µs per message", per(func(st schedStats) float64 {
			var sum float64
			for _, v := range st.wake[c.class] {
				sum += v
			}
			return sum
		}), 1)
		if c.class == classKworker {
			for _, b := range []struct {
				name  string
				class int
			}{{"the tool's thread", classTool}, {"idle", classIdle}, {"another task (perf, ...)", classOther}, {"another kworker", classKworker}, {"ksoftirqd", classSoftirq}} {
				row("kworker wait, µs per message, ended by switching out "+b.name, per(func(st schedStats) float64 { return st.kworkerWaitBehind[b.class] }), 1)
			}
		}
	}
	fmt.Fprintf(b, "| the client's wake-ups by thread (thread id − process id: per message) | %s | %s | |\n", s[0].clientWakes(), s[1].clientWakes())
	fmt.Fprintf(b, "| the client's threads on a vCPU (thread id − process id: %% of the slice) | %s | %s | |\n",
		byThread(s[0].stats.clientOn, 100/s[0].stats.slice, 1), byThread(s[1].stats.clientOn, 100/s[1].stats.slice, 1))
	fmt.Fprintf(b, "| kworker wait ended by switching out a client thread (thread id − process id: µs per message) | %s | %s | |\n",
		byThread(s[0].stats.kworkerBehindClient, 1/s[0].msgs, 1), byThread(s[1].stats.kworkerBehindClient, 1/s[1].msgs, 1))
	row("client off-CPU, µs (no thread of it on a vCPU)", per(func(st schedStats) float64 { return st.clientOff }), 1)
	row("client off-CPU, % of the slice", func(x schedSide) float64 { return 100 * x.stats.clientOff / x.stats.slice }, 1)
	row("client's threads that ran in the slice", func(x schedSide) float64 { return float64(x.stats.clientTids) }, 0)
	for cpu := range max(len(s[0].stats.idle), len(s[1].stats.idle)) {
		row(fmt.Sprintf("vCPU %d idle, %% of the slice", cpu), func(x schedSide) float64 {
			if cpu >= len(x.stats.idle) {
				return math.NaN()
			}
			return 100 * x.stats.idle[cpu] / x.stats.slice
		}, 1)
	}
	row("vCPUs idle, µs per message", per(func(st schedStats) float64 {
		var sum float64
		for _, v := range st.idle {
			sum += v
		}
		return sum
	}), 1)
}

func fnum(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// clientWakes lists the client's wake-ups per message by thread.
func (x schedSide) clientWakes() string {
	m := map[int]float64{}
	for off, n := range x.stats.clientWakes {
		m[off] = float64(n)
	}
	return byThread(m, 1/x.msgs, 3)
}

// byThread lists m's values times scale by thread (id less the process
// id), the largest first, at most four.
func byThread(m map[int]float64, scale float64, prec int) string {
	type tv struct {
		off int
		v   float64
	}
	var v []tv
	for off, x := range m {
		v = append(v, tv{off, x * scale})
	}
	slices.SortFunc(v, func(a, b tv) int {
		if c := cmpDesc(a.v, b.v); c != 0 {
			return c
		}
		return a.off - b.off
	})
	var parts []string
	for i, t := range v {
		if i == 4 {
			break
		}
		parts = append(parts, fmt.Sprintf("+%d: %s", t.off, strconv.FormatFloat(t.v, 'f', prec, 64)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

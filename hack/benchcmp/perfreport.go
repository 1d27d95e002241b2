package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/purerdma/purerdma/internal/perftest"
)

// perf report's output, read and sorted into the profile's tables
// (profile.go records the data).

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
	result  perftest.Result
	iters   int
	comms   []share // by command: all samples
	threads []share // by thread: the tool's samples
	syms    []share // by dso and symbol: the tool's samples
	allSyms []share // by dso and symbol: every thread's samples
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

// isTool tells rperf's own code (its package main: the Go side is always
// the rperf program, never a test binary) and perftest's program apart
// from the libraries.
func isTool(dso, sym string) bool {
	return strings.HasPrefix(sym, "[.] main.") || strings.HasPrefix(dso, "ib_")
}

func isRuntime(dso, sym string) bool { return strings.HasPrefix(sym, "[.] runtime.") }

// categories are checked in order; the first that matches takes a symbol.
var categories = []category{
	{"kernel: rxe (transport work in the tool's system calls)", isRXE},
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
	var rxe float64
	for _, s := range sp.allSyms {
		if len(s.keys) >= 2 && isRXE(s.keys[0], s.keys[1]) {
			rxe += s.pct
		}
	}
	return append(append([]float64{tool}, cats...), softirq, kworker, idle, rest, rxe)
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
	"ksoftirqd (rxe's deferred work)", "kworker", "idle (swapper)", "everything else (perf, init...)",
	"rxe's work in any thread (the per-message clock)")

// rxeRow is the row of rxe's kernel work in every thread: the tool's
// system calls on Linux 6.1, where the send doorbell runs rxe's requester
// in the caller's system call, but mostly kworkers from 6.12, where the
// doorbell queues it on a workqueue (rxe_sched_task), and ksoftirqd for
// deferred responder work on either.
var rxeRow = len(profileRowNames) - 1

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
func resultCell(r perftest.Result) string {
	if r.MsgRate > 0 && r.TTypical == 0 {
		return formatNum(r.MsgRate) + " Mpps"
	}
	return formatNum(r.TTypical) + " µs typical"
}

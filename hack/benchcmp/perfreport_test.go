package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Lines as perf 6.1's report --stdio -t ';' prints them.
func TestParseReport(t *testing.T) {
	out := `# To display the perf.data header info, please use --header/--header-only options.
#
# Samples: 599  of event 'cpu-clock:pppH' (time slices: 25%-75%)
#
# Overhead;    Pid:Command
 31.72% ;  12242:rperf
 7.85%  ;  12246:rperf


#
# (Tip: Use parent filter to see specific call path: perf report -p <regex>)
`
	want := []share{{31.72, []string{"12242:rperf"}}, {7.85, []string{"12246:rperf"}}}
	if diff := cmp.Diff(want, parseReport(out), cmp.AllowUnexported(share{})); diff != "" {
		t.Errorf("parseReport (-want +got):\n%s", diff)
	}
	syms := parseReport(" 30.22% ;[vdso]           ;[.] __vdso_clock_gettime\n 3.17%  ;rperf            ;[.] main.(*session).latWrite\n")
	if len(syms) != 2 || syms[1].keys[0] != "rperf" || syms[1].keys[1] != "[.] main.(*session).latWrite" {
		t.Errorf("dso,sym: %+v", syms)
	}
}

func TestProfileRows(t *testing.T) {
	sh := func(pct float64, keys ...string) share { return share{pct, keys} }
	sp := sideProfile{
		comm:    "rperf",
		comms:   []share{sh(60, "rperf"), sh(20, "swapper"), sh(10, "ksoftirqd/1"), sh(6, "kworker/0:1"), sh(4, "perf")},
		threads: []share{sh(30, "10:rperf"), sh(25, "11:rperf"), sh(5, "12:rperf")},
		syms: []share{
			sh(12, "[rdma_rxe]", "[k] rxe_requester"),
			sh(3, "[kernel.kallsyms]", "[k] rxe_post"),
			sh(6, "[kernel.kallsyms]", "[k] entry_SYSCALL_64"),
			sh(2, "[kernel.kallsyms]", "[k] finish_task_switch.isra.0"),
			sh(5, "rperf", "[.] runtime.sysmon"),
			sh(20, "rperf", "[.] github.com/purerdma/purerdma/cq.(*CQ).Poll"),
			sh(7, "rperf", "[.] main.(*session).latWrite"),
			sh(5, "[vdso]", "[.] __vdso_clock_gettime"),
		},
		allSyms: []share{
			sh(12, "[rdma_rxe]", "[k] rxe_requester"),
			sh(3, "[kernel.kallsyms]", "[k] rxe_post"),
			sh(4, "[rdma_rxe]", "[k] rxe_completer"), // in a kworker
			sh(2, "[kernel.kallsyms]", "[k] finish_task_switch.isra.0"),
		},
	}
	got := sp.rows()
	want := []float64{60, 15, 2, 6, 5, 7, 20, 5, 10, 6, 20, 4, 19}
	if len(got) != len(profileRowNames) {
		t.Fatalf("%d rows, %d names", len(got), len(profileRowNames))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	// A C side: the provider and perftest's program by their DSOs.
	c := sideProfile{comm: "ib_write_lat", syms: []share{
		sh(30, "librxe-rdmav34.so", "[.] rxe_poll_cq"),
		sh(10, "ib_write_lat", "[.] run_iter_lat_write"),
	}, allSyms: []share{sh(38, "[rdma_rxe]", "[k] rxe_requester")}}
	cr := c.rows()
	if cr[5] != 10 || cr[6] != 30 {
		t.Errorf("C rows %v", cr)
	}
	var b strings.Builder
	if got := sp.threadList(1); got != "30.0 %, 25.0 %, 5.0 %" {
		t.Errorf("threadList = %q", got)
	}
	if got := (sideProfile{}).threadList(1); got != "none" {
		t.Errorf("no threads: threadList = %q", got)
	}
	if n := sp.busyThreads(1); n != 3 {
		t.Errorf("%d busy threads, want 3", n)
	}
	writeProfile(&b, "write_lat", 64, [2]sideProfile{sp, c}, 2)
	for _, s := range []string{"### write_lat, 64 bytes", "| … kernel: rxe (transport work in the tool's system calls) | 15.0 % | 0.0 % | Go only |",
		"| … user: RDMA stack (purerdma packages; libibverbs, rxe provider, librpma) | 20.0 % | 30.0 % | 1.33 |",
		"| rxe's work in any thread (the per-message clock) | 19.0 % | 38.0 % | 1.00 |",
		"- 20.0 % `[.] github.com/purerdma/purerdma/cq.(*CQ).Poll` (rperf)", "Threads with at least 1 % of the samples: Go 3, C 0.", "- 30.0 % `[.] rxe_poll_cq` (librxe-rdmav34.so)"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("no %q in\n%s", s, b.String())
		}
	}
}

func TestPerMessage(t *testing.T) {
	for _, tc := range []struct {
		goV, goRXE, cV, cRXE float64
		want                 string
	}{
		{20, 10, 20, 20, "2.00"}, // same share, half the messages: twice the cost
		{5, 10, 0, 20, "Go only"},
		{0, 10, 0, 20, "–"},
		{5, 0, 5, 20, "n/a"},
		{15, 15, 18, 18, "1.00"},
	} {
		if got := perMessage(tc.goV, tc.goRXE, tc.cV, tc.cRXE); got != tc.want {
			t.Errorf("perMessage(%v, %v, %v, %v) = %q, want %q", tc.goV, tc.goRXE, tc.cV, tc.cRXE, got, tc.want)
		}
	}
}

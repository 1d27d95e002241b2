package main

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

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
	}
	got := sp.rows()
	want := []float64{60, 15, 2, 6, 5, 7, 20, 5, 10, 6, 20, 4}
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
	}}
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
	for _, s := range []string{"### write_lat, 64 bytes", "| … kernel: rxe (transport work in the doorbell and completions) | 15.0 % | 0.0 % | n/a |",
		"- 20.0 % `[.] github.com/purerdma/purerdma/cq.(*CQ).Poll` (rperf)", "Threads with at least 1 % of the samples: Go 3, C 0.", "- 30.0 % `[.] rxe_poll_cq` (librxe-rdmav34.so)"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("no %q in\n%s", s, b.String())
		}
	}
}

func TestCommOf(t *testing.T) {
	for in, want := range map[string]string{"/opt/purerdma/bin/rperf": "rperf", "/x/rperf.test": "rperf.test", "ib_atomic_lat": "ib_atomic_lat", "a_very_long_program_name": "a_very_long_pro"} {
		if got := commOf(in); got != want {
			t.Errorf("commOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestItersForLoop(t *testing.T) {
	lat, bw := tests[0], tests[6]
	for _, tc := range []struct {
		name string
		t    testKind
		r    Result
		d    time.Duration
		want int
	}{
		{"latency", lat, Result{TTypical: 50}, 4 * time.Second, 40000},
		{"read latency: a whole round trip", tests[1], Result{TTypical: 100}, 4 * time.Second, 40000},
		{"bandwidth", bw, Result{MsgRate: 0.01}, 4 * time.Second, 40000},
		{"at least the calibration", lat, Result{TTypical: 5000}, time.Second, calibrationIters},
		{"no figure", bw, Result{}, time.Second, calibrationIters},
		{"capped", lat, Result{TTypical: 1e-6}, time.Second, 1 << 22},
	} {
		if got := itersForLoop(tc.t, tc.r, tc.d); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestParseProfileArgs(t *testing.T) {
	p, err := parseProfileArgs(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.tests) != 4 || !slices.Equal(p.rpmaTests, []string{"read"}) || p.loop != 4*time.Second || p.window != "30%-70%" {
		t.Errorf("defaults: %+v", p)
	}
	p, err = parseProfileArgs([]string{"-tests", "ib_write_lat, rpma_read,rpma_sendrecv", "-goenv", "GOMAXPROCS=1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.tests, []int{0}) || !slices.Equal(p.rpmaTests, []string{"read", "sendrecv"}) || len(p.goEnv) != 1 {
		t.Errorf("parsed: %+v", p)
	}
	ws := p.workloads()
	if len(ws) != 3 || ws[0].cComm != "ib_write_lat" || ws[2].t.name != "rpma_sendrecv" || ws[2].cComm != "rpmabench" {
		t.Errorf("workloads: %+v", ws)
	}
	if got := iterTime(tests[1], Result{TTypical: 30, TAvg: 40}); got != 40 {
		t.Errorf("read_lat iteration %v µs, want the mean, 40", got)
	}
	if got := iterTime(ws[2].t, Result{TTypical: 30}); got != 60 {
		t.Errorf("rpma_sendrecv iteration %v µs, want 60", got)
	}
	for _, bad := range [][]string{{"-tests", "rpma_nope"}, {"-loop", "0s"}, {"-n", "-1"}, {"extra"}} {
		if _, err := parseProfileArgs(bad, io.Discard); err == nil {
			t.Errorf("%q: no error", bad)
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

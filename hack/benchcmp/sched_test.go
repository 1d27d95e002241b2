package main

import (
	"math"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/perftest"
)

func TestParseSchedLine(t *testing.T) {
	for _, c := range []struct {
		line string
		ok   bool
		want schedEvent
	}{
		{"           rperf     512/514     [001]   101.000100:       sched:sched_switch: prev_comm=rperf prev_pid=514 prev_prio=120 prev_state=R+ ==> next_comm=kworker/u4:1 next_pid=40 next_prio=120", true,
			schedEvent{t: 101.0001, cpu: 1, kind: evSwitch, prev: 514, next: 40, prevClass: classTool, nextClass: classKworker, prevRunnable: true, hdrPid: 512, hdrTid: 514, hdrCls: classTool}},
		{"     ib_read_lat     600/600     [000]   101.000200:       sched:sched_switch: prev_comm=ib_read_lat prev_pid=600 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120", true,
			schedEvent{t: 101.0002, cpu: 0, kind: evSwitch, prev: 600, next: 0, prevClass: classOther, nextClass: classIdle, hdrPid: 600, hdrTid: 600, hdrCls: classOther}},
		{"       swapper       0/0         [000]   101.000300:       sched:sched_wakeup: comm=ksoftirqd/0 pid=14 prio=120 target_cpu=000", true,
			schedEvent{t: 101.0003, cpu: 0, kind: evWakeup, pid: 14, class: classSoftirq, hdrCls: classIdle}},
		{"    kworker/u4:1      40/40      [001]   101.000400: sched:sched_migrate_task: comm=rperf pid=515 prio=120 orig_cpu=1 dest_cpu=0", true,
			schedEvent{t: 101.0004, cpu: 1, kind: evMigrate, pid: 515, class: classTool, hdrPid: 40, hdrTid: 40, hdrCls: classKworker}},
		// A command name with a space, in the header and in the fields.
		{"  my tool       77/78      [001]   5.000001:       sched:sched_wakeup: comm=my tool pid=78 prio=120 target_cpu=001", true,
			schedEvent{t: 5.000001, cpu: 1, kind: evWakeup, pid: 78, class: classOther, hdrPid: 77, hdrTid: 78, hdrCls: classOther}},
		{"           rperf     512/514     [001]   101.000100:       sched:sched_stat_runtime: comm=rperf pid=514 runtime=100 [ns]", false, schedEvent{}},
		{"Warning: Processed 100 events and lost 2 chunks!", false, schedEvent{}},
	} {
		got, ok := parseSchedLine(c.line, "rperf")
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("parseSchedLine(%q) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

func TestTraceFields(t *testing.T) {
	got := traceFields("prev_comm=a b prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=kworker/0:1 next_pid=9 next_prio=120")
	want := map[string]string{"prev_comm": "a b", "prev_pid": "1", "prev_prio": "120", "prev_state": "S", "next_comm": "kworker/0:1", "next_pid": "9", "next_prio": "120"}
	if len(got) != len(want) {
		t.Fatalf("traceFields = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("traceFields[%q] = %q, want %q", k, got[k], v)
		}
	}
}

// A literal trace over 0..1 ms on two vCPUs, analysed whole: the client
// (pid 20, threads 20 and 21) and the server (pid 10) are rperf.
const schedTrace = `
           rperf      20/20      [000]     1.000000:       sched:sched_switch: prev_comm=rperf prev_pid=20 prev_prio=120 prev_state=R+ ==> next_comm=kworker/0:1 next_pid=30 next_prio=120
           rperf      10/10      [001]     1.000000:       sched:sched_wakeup: comm=rperf pid=21 prio=120 target_cpu=001
    kworker/0:1       30/30      [000]     1.000100:       sched:sched_switch: prev_comm=kworker/0:1 prev_pid=30 prev_prio=120 prev_state=I ==> next_comm=swapper/0 next_pid=0 next_prio=120
           rperf      10/10      [001]     1.000200:       sched:sched_switch: prev_comm=rperf prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=rperf next_pid=21 next_prio=120
           rperf      20/21      [001]     1.000300:       sched:sched_wakeup: comm=kworker/0:1 pid=30 prio=120 target_cpu=000
         swapper       0/0       [000]     1.000350:       sched:sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=kworker/0:1 next_pid=30 next_prio=120
    kworker/0:1       30/30      [000]     1.000400: sched:sched_migrate_task: comm=rperf pid=20 prio=120 orig_cpu=0 dest_cpu=1
    kworker/0:1       30/30      [000]     1.000500:       sched:sched_wakeup: comm=rperf pid=20 prio=120 target_cpu=000
    kworker/0:1       30/30      [000]     1.000600:       sched:sched_switch: prev_comm=kworker/0:1 prev_pid=30 prev_prio=120 prev_state=I ==> next_comm=rperf next_pid=20 next_prio=120
           rperf      20/21      [001]     1.000700:       sched:sched_wakeup: comm=rperf pid=21 prio=120 target_cpu=001
           rperf      20/21      [001]     1.001000:       sched:sched_switch: prev_comm=rperf prev_pid=21 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
`

func TestAnalyseSched(t *testing.T) {
	evs, err := parseSched(strings.NewReader(schedTrace), "rperf")
	if err != nil || len(evs) != 11 {
		t.Fatalf("parseSched: %d events, %v; want 11", len(evs), err)
	}
	st := analyseSched(evs, 0, 1)
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-3 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("slice µs", st.slice, 1000)
	if st.switches != 3 || st.preempted != 1 || st.migrations != 1 || st.clientPid != 20 || st.clientTids != 2 {
		t.Errorf("switches %d preempted %d migrations %d client %d threads %d; want 3 1 1 20 2",
			st.switches, st.preempted, st.migrations, st.clientPid, st.clientTids)
	}
	// The kworker: woken at 300, on vCPU 0 at 350 (its earlier switch-in
	// at 0 had no wake-up in the trace).
	if w := st.wake[classKworker]; len(w) != 1 {
		t.Errorf("kworker wake-ups %v, want one of 50 µs", w)
	} else {
		near("kworker wake-up µs", w[0], 50)
	}
	// ... taking vCPU 0 from the idle task.
	near("kworker wait behind idle µs", st.kworkerWaitBehind[classIdle], 50)
	near("kworker wait behind the tool µs", st.kworkerWaitBehind[classTool], 0)
	// rperf's switches: 20 to the kworker, 10 to its own 21, 21 to idle.
	if st.switchTo[classKworker] != 1 || st.switchTo[classTool] != 1 || st.switchTo[classIdle] != 1 {
		t.Errorf("switches to kworker %d, tool %d, idle %d; want 1 each", st.switchTo[classKworker], st.switchTo[classTool], st.switchTo[classIdle])
	}
	// The client's threads: 20 on vCPU 0 from 600 to the end, 21 on
	// vCPU 1 from 200 to 1000.
	near("client +0 on µs", st.clientOn[0], 400)
	near("client +1 on µs", st.clientOn[1], 800)
	// rperf's 21 woken at 0, in at 200; 20 woken at 500, in at 600; 21's
	// wake-up at 700 while on vCPU 1 waits for nothing.
	if w := st.wake[classTool]; len(w) != 2 {
		t.Errorf("tool wake-ups %v, want 200 and 100 µs", w)
	} else {
		near("tool wake-up µs", w[0]+w[1], 300)
	}
	// The client (20 and 21) ran on vCPU 0 until 0, on vCPU 1 from 200
	// to 1000 and on vCPU 0 from 600: off from 0 to 200.
	near("client off µs", st.clientOff, 200)
	// vCPU 0 idle 100..350; vCPU 1 idle after 1000: none.
	near("vCPU 0 idle µs", st.idle[0], 250)
	near("vCPU 1 idle µs", st.idle[1], 0)

	// The slice 50 %-100 %: from 500 on.
	st = analyseSched(evs, 0.5, 1)
	near("half slice µs", st.slice, 500)
	if st.switches != 1 || st.migrations != 0 || len(st.wake[classKworker]) != 0 || len(st.wake[classTool]) != 1 {
		t.Errorf("second half: switches %d migrations %d kworker %v tool %v; want 1 0 [] [100]", st.switches, st.migrations, st.wake[classKworker], st.wake[classTool])
	}
	near("second half client off µs", st.clientOff, 0)
}

func TestSchedWindow(t *testing.T) {
	for _, c := range []struct {
		s      string
		lo, hi float64
		ok     bool
	}{
		{"30%-70%", 0.3, 0.7, true},
		{"0%-100%", 0, 1, true},
		{"70%-30%", 0, 0, false},
		{"1.5-2.5", 0, 0, false},
		{"30%", 0, 0, false},
	} {
		lo, hi, err := schedWindow(c.s)
		if (err == nil) != c.ok || lo != c.lo || hi != c.hi {
			t.Errorf("schedWindow(%q) = %v, %v, %v", c.s, lo, hi, err)
		}
	}
}

func TestUnionLen(t *testing.T) {
	for _, c := range []struct {
		iv   [][2]float64
		want float64
	}{
		{nil, 0},
		{[][2]float64{{0, 1}}, 1},
		{[][2]float64{{2, 3}, {0, 1}}, 2},
		{[][2]float64{{0, 2}, {1, 3}}, 3},
		{[][2]float64{{0, 4}, {1, 2}}, 4},
	} {
		if got := unionLen(c.iv); got != c.want {
			t.Errorf("unionLen(%v) = %v, want %v", c.iv, got, c.want)
		}
	}
}

func TestWriteSched(t *testing.T) {
	evs, _ := parseSched(strings.NewReader(schedTrace), "rperf")
	st := analyseSched(evs, 0, 1)
	var b strings.Builder
	writeSched(&b, "read_lat", 64, [2]schedSide{{stats: st, msgs: 10}, {stats: st, msgs: 20}})
	for _, want := range []string{
		"### read_lat, 64 bytes",
		"| context switches of the tool's threads | 0.300 | 0.150 | 2.00 |",
		"| kworker wake-up to running, median µs | 50.0 | 50.0 | 1.00 |",
		"| kworker wait, µs per message, ended by switching out idle | 5.0 | 2.5 | 2.00 |",
		"| of which to a kworker | 0.100 | 0.050 | 2.00 |",
		"| the client's threads on a vCPU (thread id − process id: % of the slice) | +1: 80.0, +0: 40.0 | +1: 80.0, +0: 40.0 | |",
		"| the client's wake-ups by thread (thread id − process id: per message) | +0: 0.100, +1: 0.100 | +0: 0.050, +1: 0.050 | |",
		"| ksoftirqd wake-up to running, median µs | – | – | – |",
		"| the tool's threads wake-up to running, all µs per message | 30.0 | 15.0 | 2.00 |",
		"| client off-CPU, % of the slice | 20.0 | 20.0 | 1.00 |",
		"| vCPU 0 idle, % of the slice | 25.0 | 25.0 | 1.00 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no line %q in\n%s", want, b.String())
		}
	}
}

func TestMsgTime(t *testing.T) {
	lat := perftest.Test{Name: "read_lat", Lat: true}
	half := perftest.Test{Name: "send_lat", Lat: true}
	for _, c := range []struct {
		t     perftest.Test
		r     perftest.Result
		took  float64
		iters int
		want  float64
	}{
		{lat, perftest.Result{TTypical: 60, TAvg: 90}, 1e6, 1000, 90},
		{half, perftest.Result{TTypical: 60, TAvg: 90}, 1e6, 1000, 180},
		// rpma: the median alone; the wall time per iteration instead.
		{lat, perftest.Result{TTypical: 60}, 1e6, 1000, 1000},
	} {
		if got := msgTime(c.t, c.r, c.took, c.iters); got != c.want {
			t.Errorf("msgTime(%s, %+v, %v, %d) = %v, want %v", c.t.Name, c.r, c.took, c.iters, got, c.want)
		}
	}
}

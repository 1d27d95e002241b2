package soak_test

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
)

var (
	soakDuration = flag.Duration("soak.duration", time.Minute, "how long the soak makes new cycles")
	soakSeed     = flag.Uint64("soak.seed", 0, "seed of the fault schedule and data (0: from the clock)")
)

// sampleEvery is how often the workers are paused for a process sample.
const sampleEvery = 2 * time.Second

// Tolerances of the flatness check: the median of the last tenth of the
// samples may exceed that of the first tenth after warm-up by this much.
// Samples are taken with every worker paused between cycles and after
// debug.FreeOSMemory, so that they see the process at rest; what is left
// is the Go runtime's own slack (heap metadata, stacks, span caches),
// which settles during warm-up.
const (
	rssTolBytes  = 4 << 20 // of anonymous RSS, and rssTolFrac of the first median
	rssTolFrac   = 0.10
	heapTolBytes = 1 << 20 // and rssTolFrac of the first median
	mapsTol      = 8       // mappings of any kind: the runtime's arenas may add a few
	fdTol        = 0       // every fd is closed at rest
	libBytesTol  = 0       // no queue, doorbell or mr.Alloc mapping is left at rest
	goroutineTol = 0       // nothing of a cycle runs at rest
	warmupFrac   = 0.2     // of the samples, not judged
	minWindow    = 5       // samples in each compared tenth, at least
)

// procSample is one pause's view of the process.
type procSample struct {
	at   time.Duration
	p    testenv.ProcSample
	heap uint64 // live heap after the collection
	// runtime is what the Go runtime holds from the OS and has not
	// released (MemStats.Sys - HeapReleased): heap, stacks and the
	// runtime's own structures, the part of anonymous RSS it accounts for.
	runtime uint64
	// slab is the guest kernel's slab memory (/proc/meminfo), where the
	// kernel's RDMA, rdma_cm and TCP objects live: shown, not judged,
	// since the kernel's caches grow and shrink on their own.
	slab uint64
	// goroutines are the process's, less the workers still running:
	// a worker that ends first must not hide a goroutine leaked by the
	// other.
	goroutines int
}

func TestSoak(t *testing.T) {
	testenv.RequireVM(t)
	devs := testenv.Devices(t) // and the leak check around the whole soak
	seed := *soakSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("soak: %v on Linux %s (%s), seed %d", *soakDuration, testenv.KernelRelease(), testenv.Arch(), seed)
	klog := openKernelLog()
	start := time.Now()
	end := start.Add(*soakDuration)

	// The workers hold gate for reading during a cycle and its resource
	// check; the sampler takes it for writing, so that it samples the
	// process with nothing of a cycle open.
	var gate sync.RWMutex
	var workers []*soaker
	for i, d := range devs {
		workers = append(workers, newSoaker(t, d.Driver, i, rand.New(rand.NewPCG(seed, uint64(i)))))
	}
	var wg sync.WaitGroup
	var running atomic.Int32
	done := make(chan struct{})
	for _, w := range workers {
		wg.Add(1)
		running.Add(1)
		go func() {
			defer wg.Done()
			defer running.Add(-1)
			w.run(end, &gate)
		}()
	}
	go func() { wg.Wait(); close(done) }()

	var samples []procSample
	sample := func() {
		gate.Lock()
		defer gate.Unlock()
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		p, err := testenv.SampleProcess()
		if err != nil {
			t.Errorf("sample: %v", err)
			return
		}
		if len(samples) > 0 && p.FDs > samples[0].p.FDs {
			// Named for the record: at rest every fd of a cycle is closed.
			var extra []string
			for fd, name := range p.FDNames {
				if _, ok := samples[0].p.FDNames[fd]; !ok {
					extra = append(extra, fmt.Sprintf("%d -> %s", fd, name))
				}
			}
			t.Logf("sample at %v: %d fds, %d at the first: %v", time.Since(start).Round(time.Second), p.FDs, samples[0].p.FDs, extra)
		}
		samples = append(samples, procSample{at: time.Since(start), p: p, heap: ms.HeapAlloc, slab: slab(),
			runtime: ms.Sys - ms.HeapReleased, goroutines: runtime.NumGoroutine() - int(running.Load())})
	}
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	// No sample after the workers ended: the judgement is of the process
	// at rest between cycles; the leak check of TestMain covers the end.
loop:
	for {
		select {
		case <-done:
			break loop
		case <-tick.C:
			sample()
			klog.read()
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "soak: %v (ran %v) on Linux %s (%s), %d CPUs, seed %d\n",
		*soakDuration, time.Since(start).Round(time.Second), testenv.KernelRelease(), testenv.Arch(), runtime.NumCPU(), seed)
	ok := true
	for _, w := range workers {
		ok = w.summary(&b) && ok
	}
	ok = flat(&b, samples) && ok
	ok = klog.summary(&b) && ok
	if ok {
		b.WriteString("soak: PASS\n")
	} else {
		b.WriteString("soak: FAIL\n")
	}
	// One block, so that the two devices' lines stay together in the log.
	fmt.Print("=== SOAK SUMMARY\n" + b.String() + "=== SOAK END\n")
	for _, w := range workers {
		for _, p := range w.problems {
			t.Errorf("%s: %s", w.driver, p)
		}
	}
	if !ok {
		t.Error("soak failed: see the summary")
	}
}

// flat judges the samples: for each quantity, the last tenth against the
// first tenth after warm-up, with its tolerance. Sizes compare the
// medians of the two tenths. Counts (fds, mappings, goroutines, the
// library's mapped bytes) compare their floors, the minimum of each
// tenth: a goroutine of the cycle before may still be finishing while
// the workers are paused (a child's output reader, say), which raises a
// sample now and then, but a leak raises every sample after it. It
// writes one line per quantity and reports whether all stayed flat.
func flat(b *strings.Builder, samples []procSample) bool {
	n := len(samples)
	skip := int(float64(n) * warmupFrac)
	judged := samples[skip:]
	// At least minWindow samples a side, so that a short run's floor is
	// not one sample's.
	tenth := max(min(minWindow, len(judged)), len(judged)/10)
	if len(judged) < 2 {
		fmt.Fprintf(b, "soak process: %d samples, too few to judge growth\n", n)
		return true
	}
	first, last := judged[:tenth], judged[len(judged)-tenth:]
	fmt.Fprintf(b, "soak process: %d samples every %v, %d judged after warm-up (%v); the first %d of them vs the last %d:\n",
		n, sampleEvery, len(judged), judged[0].at.Round(time.Second), tenth, tenth)
	ok := true
	check := func(name string, get func(procSample) float64, tol func(first float64) float64, unit string) {
		stat, how := median, "median"
		if unit == "" || unit == "B" {
			stat, how = floor, "floor"
		}
		m0, m1 := stat(first, get), stat(last, get)
		grew := m1 > m0+tol(m0)
		verdict := "flat"
		if grew {
			verdict, ok = "GREW", false
		}
		lo, hi := minMax(samples, get)
		dist := ""
		if unit == "" {
			dist = "; samples " + histogram(samples, get)
		}
		fmt.Fprintf(b, "  %-10s %s %s -> %s (tolerance +%s; min %s, max %s of all%s): %s\n",
			name, how, fmtUnit(m0, unit), fmtUnit(m1, unit), fmtUnit(tol(m0), unit), fmtUnit(lo, unit), fmtUnit(hi, unit), dist, verdict)
	}
	frac := func(abs, f float64) func(float64) float64 {
		return func(m float64) float64 { return max(abs, m*f) }
	}
	fixed := func(abs float64) func(float64) float64 { return func(float64) float64 { return abs } }
	check("RSS anon", func(s procSample) float64 { return float64(s.p.RSSAnon) }, frac(rssTolBytes, rssTolFrac), "MiB")
	m0, m1 := median(first, func(s procSample) float64 { return float64(s.p.RSS) }), median(last, func(s procSample) float64 { return float64(s.p.RSS) })
	fmt.Fprintf(b, "  %-10s median %s -> %s (not judged: the rest of RSS is the binary's code, paged in as new paths run)\n", "RSS", fmtUnit(m0, "MiB"), fmtUnit(m1, "MiB"))
	m0, m1 = median(first, func(s procSample) float64 { return float64(s.runtime) }), median(last, func(s procSample) float64 { return float64(s.runtime) })
	fmt.Fprintf(b, "  %-10s median %s -> %s (not judged: what the Go runtime holds from the OS, unreleased)\n", "Go runtime", fmtUnit(m0, "MiB"), fmtUnit(m1, "MiB"))
	m0, m1 = median(first, func(s procSample) float64 { return float64(s.slab) }), median(last, func(s procSample) float64 { return float64(s.slab) })
	fmt.Fprintf(b, "  %-10s median %s -> %s (not judged: the guest kernel's slab caches)\n", "slab", fmtUnit(m0, "MiB"), fmtUnit(m1, "MiB"))
	check("Go heap", func(s procSample) float64 { return float64(s.heap) }, frac(heapTolBytes, rssTolFrac), "MiB")
	check("fds", func(s procSample) float64 { return float64(s.p.FDs) }, fixed(fdTol), "")
	check("mappings", func(s procSample) float64 { return float64(s.p.Maps) }, fixed(mapsTol), "")
	check("lib maps", func(s procSample) float64 { return float64(s.p.LibBytes) }, fixed(libBytesTol), "B")
	check("goroutines", func(s procSample) float64 { return float64(s.goroutines) }, fixed(goroutineTol), "")
	return ok
}

func median(s []procSample, get func(procSample) float64) float64 {
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = get(x)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// slab reads Slab from /proc/meminfo, in bytes; 0 if it cannot.
func slab() uint64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "Slab:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// floor is the smallest value of the samples.
func floor(s []procSample, get func(procSample) float64) float64 {
	lo, _ := minMax(s, get)
	return lo
}

// histogram counts the samples of each value: "5 x40, 6 x3".
func histogram(s []procSample, get func(procSample) float64) string {
	n := map[float64]int{}
	for _, x := range s {
		n[get(x)]++
	}
	var parts []string
	for _, v := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%.0f x%d", v, n[v]))
	}
	return strings.Join(parts, ", ")
}

func minMax(s []procSample, get func(procSample) float64) (lo, hi float64) {
	lo, hi = get(s[0]), get(s[0])
	for _, x := range s {
		lo, hi = min(lo, get(x)), max(hi, get(x))
	}
	return lo, hi
}

func fmtUnit(v float64, unit string) string {
	switch unit {
	case "MiB":
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case "B":
		return fmt.Sprintf("%.0f B", v)
	}
	return fmt.Sprintf("%.0f", v)
}

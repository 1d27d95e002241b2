package conformance

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// The host cost table: what one operation costs in user space, Go against
// rdma-core's librxe, libsiw and libmlx5 (hostcost_mlx5.go), over the same
// fake rings (the harnesses' bench rows and the Go benchmarks in
// uverbs/hostcost_test.go and cq/hostcost_test.go), in time and in
// instructions. Time: rounds alternate C and Go; the table has the median
// of each. Instructions: valgrind's callgrind counts the instructions
// executed inside one named loop function on each side (the harnesses'
// count command, hostloop_*; the rows' Loop), which runs nothing but the
// operations; the fake kernel's work runs between the loop's calls, and
// its doorbell, called from inside, is toggled off again. Two runs of
// countSmall and countLarge operations are differenced, so that what
// happens once (the first call's stack growth, the loop's entry) drops
// out. Callgrind's counts by instruction also say how many of them are
// NOPs (nops.go), which Go's assembler and compiler put in the path and
// gcc mostly does not. `make bench-host` runs it.

// EnvBenchHost enables the host cost tests; EnvBenchHostOut names the
// file they append their rows to.
const (
	EnvBenchHost    = "PURERDMA_BENCH_HOST"
	EnvBenchHostOut = "PURERDMA_BENCH_HOST_OUT"
)

// envBenchHostCount, "ROW OPS", makes HostCost run OPS operations of one
// row through its Count instead of timing: the test binary re-runs itself
// so under callgrind.
const envBenchHostCount = "PURERDMA_BENCH_HOST_COUNT"

// The two run lengths whose difference is counted: large enough that the
// chunks' boundaries (a few instructions each) are lost in the rounding,
// small enough that a run under callgrind takes a second or two.
const (
	countSmall = 4096
	countLarge = 16384
)

// BenchSetup is the rxe QP both sides time: rings of 1024 slots, send
// slots of 512 bytes (4 SGEs or 64 inline bytes), receive slots for 4
// SGEs. SiwBenchSetup is the same for siw.
var (
	BenchSetup    = Setup{Provider: "rxe", SQ: 1024, RQ: 1024, CQ: 1024, MaxSendSGE: 4, MaxRecvSGE: 4, MaxInline: 64}
	SiwBenchSetup = Setup{Provider: "siw", SQ: 1024, RQ: 1024, CQ: 1024, MaxSendSGE: 4, MaxRecvSGE: 4, MaxInline: 64}
)

// CostRow is one row of the table.
type CostRow struct {
	Name  string // the row; the harness's bench and count row unless C says another
	C     string // the harness's row to compare with, when not Name (a Go variant of a row: an owner handle's)
	What  string // what one operation is, for the table
	Iters int    // C iterations in a round
	Go    func(b *testing.B)
	// Count runs ops operations of the row, each call of Loop a chunk of
	// them, with the fake kernel's work between the calls, as the
	// harness's count command does.
	Count func(tb testing.TB, ops int)
	// Loop is the function callgrind counts: a named top-level function
	// marked go:noinline that runs operations only.
	Loop any
}

// cRow is the harness's row r is compared with.
func (r CostRow) cRow() string {
	if r.C != "" {
		return r.C
	}
	return r.Name
}

// Chunks runs ops operations as calls of loop of at most chunk each,
// and between after each call: Count's skeleton.
func Chunks(tb testing.TB, ops, chunk int, loop func(n int) error, between func()) {
	tb.Helper()
	for done := 0; done < ops; done += chunk {
		if err := loop(min(chunk, ops-done)); err != nil {
			tb.Fatal(err)
		}
		if between != nil {
			between()
		}
	}
}

// ErrShort is what a Loop returns when an operation did less than asked.
var ErrShort = errors.New("host cost: an operation did less than asked")

// HostCost times rows on the provider of u in rounds, C then Go, and
// appends the medians to the file named by EnvBenchHostOut (or logs
// them). It skips unless EnvBenchHost is set.
func HostCost(t *testing.T, u Setup, rows []CostRow, rounds int) {
	if v := os.Getenv(envBenchHostCount); v != "" {
		countChild(t, rows, v)
		return
	}
	if os.Getenv(EnvBenchHost) == "" {
		t.Skipf("host cost table: set %s=1 (make bench-host)", EnvBenchHost)
	}
	valgrind, err := exec.LookPath("valgrind")
	if err != nil {
		t.Fatalf("host cost table: %v (make bench-host installs Debian's valgrind)", err)
	}
	if err := hasSymbols(rows); err != nil {
		t.Fatal(err)
	}
	var h string
	if strings.HasPrefix(u.Provider, "mlx5") {
		h = HarnessMLX5(t)
	} else {
		h = Harness(t)
	}
	// Each Go row runs as many operations as the C row (r.Iters, the
	// benchmark's "Nx" time), not a fixed time: C's rows last tens of ms,
	// and a Go run several times longer on a shared machine is that much
	// likelier to meet a neighbour's burst, which a median of rounds does
	// not take out (on an AMD EPYC host Go's empty poll measured 4.7–8.7
	// ns run to run in 1 s runs, C's 5.2–5.5 in 50 ms ones).
	benchtime := flag.Lookup("test.benchtime")
	if benchtime == nil {
		t.Fatal("host cost table: no -test.benchtime flag to set")
	}
	defer benchtime.Value.Set(benchtime.Value.String())
	cNs := map[string][]float64{}
	goNs := map[string][]float64{}
	allocs := map[string]int64{}
	for range rounds {
		var script strings.Builder
		script.WriteString(setupLine(u))
		// Each C row once, in the rows' order: a variant of a row (C
		// set) is compared with the same C figures, and a row run
		// again after others would find the harness's rings in their
		// state (an empty poll after a poll of 16 would not be one).
		benched := map[string]bool{}
		for _, r := range rows {
			if !benched[r.cRow()] {
				benched[r.cRow()] = true
				fmt.Fprintf(&script, "bench %s %d\n", r.cRow(), r.Iters)
			}
		}
		cmd := exec.Command(h)
		cmd.Stdin = strings.NewReader(script.String())
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("C harness: %v", err)
		}
		for _, l := range Lines(string(out)) {
			f := strings.Fields(l)
			if len(f) == 3 && f[0] == "bench" {
				v, err := strconv.ParseFloat(f[2], 64)
				if err != nil {
					t.Fatal(err)
				}
				cNs[f[1]] = append(cNs[f[1]], v)
			}
		}
		for _, r := range rows {
			if err := benchtime.Value.Set(fmt.Sprintf("%dx", r.Iters)); err != nil {
				t.Fatal(err)
			}
			res := testing.Benchmark(r.Go)
			if res.N == 0 {
				t.Fatalf("Go %s failed", r.Name)
			}
			ns := float64(res.T.Nanoseconds()) / float64(res.N)
			if v, ok := res.Extra["ns/op"]; ok {
				ns = v // the row's own clock (Pause)
			}
			goNs[r.Name] = append(goNs[r.Name], ns)
			allocs[r.Name] = max(allocs[r.Name], res.AllocsPerOp())
		}
	}
	var lines []string
	for _, r := range rows {
		g, c := median(goNs[r.Name]), median(cNs[r.cRow()])
		if c == 0 {
			t.Fatalf("no C time for %s", r.Name)
		}
		gi := perOp(t, func(ops int) cost { return goInstr(t, valgrind, r, ops) })
		ci := perOp(t, func(ops int) cost { return cInstr(t, valgrind, h, u, r, ops) })
		// The rows file's fields, tab-separated, which
		// hack/benchhost.sh prints by their number: new ones go last.
		lines = append(lines, fmt.Sprintf("%s %s\t%s\t%.1f\t%.1f\t%.2f\t%.0f\t%.0f\t%.2f\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.1f\t%.1f",
			u.Provider, r.Name, r.What, g, c, g/c, gi.total, ci.total, gi.total/ci.total, allocs[r.Name],
			gi.part[partLoop], gi.part[partLayer], gi.part[partDriver], ci.part[partLoop], ci.part[partLayer], ci.part[partDriver],
			gi.nops, ci.nops))
		t.Logf("%s %-10s Go %7.1f ns  C %7.1f ns  Go/C %.2f  Go %7.1f instr  C %7.1f instr  Go/C %.2f  %d allocs/op  NOPs Go %.1f C %.1f",
			u.Provider, r.Name, g, c, g/c, gi.total, ci.total, gi.total/ci.total, allocs[r.Name], gi.nops, ci.nops)
	}
	if p := os.Getenv(EnvBenchHostOut); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// setupLine is the harnesses' setup line for u.
func setupLine(u Setup) string {
	return fmt.Sprintf("%s %d %d %d %d %d %d %d %d\n", u.Provider, u.SQ, u.RQ, u.SRQ, u.CQ,
		u.MaxSendSGE, u.MaxRecvSGE, u.MaxInline, u.SRQMaxSGE)
}

// perOp is the instructions per operation of count, the instructions of
// a run of that many operations, in all, by part and the NOPs among
// them: the difference of two runs, over the difference of their
// lengths.
func perOp(t *testing.T, count func(ops int) cost) opCost {
	small, large := count(countSmall), count(countLarge)
	if large.total <= small.total {
		t.Fatalf("callgrind: %d instructions for %d operations, %d for %d", small.total, countSmall, large.total, countLarge)
	}
	per := func(s, l uint64) float64 { return (float64(l) - float64(s)) / float64(countLarge-countSmall) }
	c := opCost{total: per(small.total, large.total), nops: per(small.nops, large.nops)}
	for i := range c.part {
		c.part[i] = per(small.part[i], large.part[i])
	}
	return c
}

// A cost is what callgrind collected in one run: the instructions in all,
// by the part of the stack they ran in, and how many of them were NOPs
// (nops.go).
type cost struct {
	total uint64
	part  [nParts]uint64
	nops  uint64
}

// An opCost is a cost per operation.
type opCost struct {
	total float64
	part  [nParts]float64
	nops  float64
}

// The parts of a row's instructions, by the function they ran in: the
// row's loop (hostLoop*, hostloop_*: the harness's own few per
// operation; libibverbs' dispatch is inline there in C), the layer
// between the loop and the provider (in Go uverbs, cq, their locks and
// the runtime; in C the pthread spin lock), and the provider (Go's
// internal/provider packages; everything else in C: the provider
// library and the libc it calls).
const (
	partLoop = iota
	partLayer
	partDriver
	nParts
)

// partOf is the part of function fn, as callgrind_annotate names it.
func partOf(fn string) int {
	switch {
	case strings.Contains(fn, "hostLoop") || strings.HasPrefix(fn, "hostloop_"):
		return partLoop
	case strings.Contains(fn, "/internal/provider/"):
		return partDriver
	case strings.HasPrefix(fn, "pthread_") || strings.Contains(fn, "/") || strings.HasPrefix(fn, "runtime.") ||
		strings.HasPrefix(fn, "sync/") || strings.HasPrefix(fn, "internal/"):
		return partLayer // a Go function outside the providers, or C's lock
	}
	return partDriver
}

// parts splits the instructions of callgrind's output file out by part,
// from callgrind_annotate's per-function counts (exclusive of callees).
func parts(t *testing.T, valgrind, out string) (p [nParts]uint64) {
	annotate := filepath.Join(filepath.Dir(valgrind), "callgrind_annotate")
	b, err := exec.Command(annotate, "--inclusive=no", "--threshold=100", out).Output()
	if err != nil {
		t.Fatalf("%s: %v", annotate, err)
	}
	return partsOf(string(b))
}

// nops counts the NOPs among the instructions in callgrind's output file
// out, a run of bin.
func nops(t *testing.T, bin, out string) uint64 {
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	costs, err := parseInstrCosts(f)
	if err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	n, err := binaryNOPs(bin, costs)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// partsOf is parts from callgrind_annotate's output.
func partsOf(annotated string) (p [nParts]uint64) {
	for _, l := range Lines(annotated) {
		m := annotatedLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, err := strconv.ParseUint(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		if err != nil {
			continue
		}
		p[partOf(m[2])] += n
	}
	return p
}

// annotatedLine is a function's line of callgrind_annotate's output:
// "1,234 ( 5.6%)  file:function [object]".
var annotatedLine = regexp.MustCompile(`^\s*([0-9,]+) \(\s*[0-9.]+%\)\s+[^:\s]*:(\S+)`)

// countChild runs the operations of v, "ROW OPS", in the test binary
// that goInstr started under callgrind.
func countChild(t *testing.T, rows []CostRow, v string) {
	var name string
	var ops int
	if _, err := fmt.Sscan(v, &name, &ops); err != nil {
		t.Fatalf("%s=%q: %v", envBenchHostCount, v, err)
	}
	for _, r := range rows {
		if r.Name == name {
			r.Count(t, ops)
			return
		}
	}
	t.Fatalf("%s=%q: no such row", envBenchHostCount, v)
}

// goInstr counts the instructions of ops operations of r in Go: the test
// binary runs itself, this test only, under callgrind, collecting inside
// r.Loop only and not inside the fake device's doorbell. One P and no
// asynchronous preemption keep the goroutine that runs the loop on its
// thread, uninterrupted by signals.
func goInstr(t *testing.T, valgrind string, r CostRow, ops int) cost {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(valgrind, append(callgrindArgs(t, funcName(r.Loop), funcName((*FakeDevice).Doorbell)),
		exe, "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1")...)
	cmd.Env = append(os.Environ(), envBenchHostCount+"="+fmt.Sprintf("%s %d", r.Name, ops),
		"GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1")
	return callgrind(t, valgrind, exe, cmd)
}

// cInstr is goInstr for the C harness h: its count command runs the
// operations in its hostloop_ functions; its doorbell is the fake
// kernel's write.
func cInstr(t *testing.T, valgrind, h string, u Setup, r CostRow, ops int) cost {
	cmd := exec.Command(valgrind, append(callgrindArgs(t, "hostloop_*", "__wrap_write"), h)...)
	cmd.Stdin = strings.NewReader(setupLine(u) + fmt.Sprintf("count %s %d\n", r.cRow(), ops))
	return callgrind(t, valgrind, h, cmd)
}

// callgrindArgs are valgrind's arguments for counting the instructions
// inside loop (--toggle-collect switches collection on at its entry and
// off at its exit, which also makes collection start off) and not inside
// the functions of exclude that it calls (their toggle switches it off
// again). --dump-instr=yes writes the counts by instruction, for the
// NOPs among them (it changes the output file only, not what is
// counted). The output file is the last argument's value.
func callgrindArgs(t *testing.T, loop string, exclude ...string) []string {
	a := []string{"--tool=callgrind", "--quiet", "--dump-instr=yes", "--toggle-collect=" + loop}
	for _, e := range exclude {
		a = append(a, "--toggle-collect="+e)
	}
	return append(a, "--callgrind-out-file="+filepath.Join(t.TempDir(), "callgrind.out"))
}

// callgrind runs cmd, valgrind with callgrindArgs on the binary bin, and
// returns the instructions it collected: the totals line of its output
// file, their parts, and the NOPs among them.
func callgrind(t *testing.T, valgrind, bin string, cmd *exec.Cmd) cost {
	var out string
	for _, a := range cmd.Args {
		if v, ok := strings.CutPrefix(a, "--callgrind-out-file="); ok {
			out = v
		}
	}
	outb, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, outb)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "totals: "); ok {
			n, err := strconv.ParseUint(strings.Fields(v)[0], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Fatalf("%s: nothing collected\n%s", strings.Join(cmd.Args, " "), outb)
			}
			return cost{total: n, part: parts(t, valgrind, out), nops: nops(t, bin, out)}
		}
	}
	t.Fatalf("%s: no totals line", out)
	return cost{}
}

// hasSymbols says why callgrind could not find the rows' loops in the
// running test binary, if it could not: `go test` strips the binaries it
// runs unless given -ldflags=-s=false, as make bench-host does.
func hasSymbols(rows []CostRow) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	f, err := elf.Open(exe)
	if err != nil {
		return err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return fmt.Errorf("host cost table: %s: %w (go test strips the binary: run it with -ldflags=-s=false)", exe, err)
	}
	for _, r := range rows {
		if !slices.ContainsFunc(syms, func(s elf.Symbol) bool { return s.Name == funcName(r.Loop) }) {
			return fmt.Errorf("host cost table: %s has no symbol %s", exe, funcName(r.Loop))
		}
	}
	return nil
}

// funcName is the symbol of function f, as callgrind sees it.
func funcName(f any) string {
	return runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// RxeRing returns a Go rxe_queue_buf of n slots of 1<<log2 bytes, indices
// zero: the 384-byte header (log2_elem_size, index_mask, producer at 128,
// consumer at 256), then the slots.
func RxeRing(log2, n uint32) []byte {
	b := make([]byte, 384+int(n)<<log2)
	binary.NativeEndian.PutUint32(b[0:], log2)
	binary.NativeEndian.PutUint32(b[4:], n-1)
	return b
}

// RxeIndex returns the producer (at 128) or consumer (at 256) index of an
// rxe ring as the atomic word the kernel side uses.
func RxeIndex(b []byte, producer bool) *atomic.Uint32 {
	off := 256
	if producer {
		off = 128
	}
	return mem.Uint32(b, off)
}

// RxeFillCQ writes the receive-with-immediate completion the bench rows
// poll into every slot of an rxe CQ ring of 64-byte slots, and fills the
// ring (as the harness does).
func RxeFillCQ(b []byte) {
	n := binary.NativeEndian.Uint32(b[4:]) + 1
	for i := range n {
		s := b[384+int(i)*64:]
		clear(s[:64])
		binary.NativeEndian.PutUint64(s[0:], 9)
		binary.NativeEndian.PutUint32(s[12:], abi.IB_WC_RECV)
		binary.NativeEndian.PutUint32(s[20:], 4096)
		binary.BigEndian.PutUint32(s[24:], 0x01020304) // imm_data is big-endian
		binary.NativeEndian.PutUint32(s[28:], 0x11)
		binary.NativeEndian.PutUint32(s[36:], abi.IB_WC_WITH_IMM)
	}
	RxeRefillCQ(b)
}

// RxeRefillCQ makes the CQ ring full again of the entries in it.
func RxeRefillCQ(b []byte) {
	n := binary.NativeEndian.Uint32(b[4:]) + 1
	RxeIndex(b, true).Store((RxeIndex(b, false).Load() + n - 1) % n)
}

// FakeDevice is a provider.Device whose mappings are Go byte slices and
// whose doorbell counts.
type FakeDevice struct {
	Maps      map[uint64][]byte
	Doorbells int
}

// Mmap returns the mapping registered at offset.
func (d *FakeDevice) Mmap(offset uint64, size int) ([]byte, error) {
	b, ok := d.Maps[offset]
	if !ok || size > len(b) {
		return nil, errors.New("fake device: no such mapping")
	}
	return b[:size], nil
}

// Munmap does nothing.
func (d *FakeDevice) Munmap([]byte) error { return nil }

// Doorbell counts. It stays a function of its own: the host cost
// table's instruction counts leave the fake kernel's doorbell out by its
// name.
//
//go:noinline
func (d *FakeDevice) Doorbell(uint32) error { d.Doorbells++; return nil }

// CreateCQ makes the CQ of driver d on dev from its
// CREATE_CQ response, through a context of the driver and both halves of
// the create, as uverbs does (the drivers here send no request data).
func CreateCQ(d provider.Driver, dev provider.Device, resp []byte) (provider.CQ, error) {
	ctx, err := d.NewContext(dev)
	if err != nil {
		return nil, err
	}
	p, err := ctx.CreateCQ(&provider.CQInit{}, nil)
	if err != nil {
		return nil, err
	}
	return p.Finish(resp)
}

// CreateQP is CreateCQ for a QP; init is both what was asked for and
// what the kernel granted.
func CreateQP(d provider.Driver, dev provider.Device, init provider.QPInit, resp []byte) (provider.Queues, error) {
	ctx, err := d.NewContext(dev)
	if err != nil {
		return provider.Queues{}, err
	}
	asked := init
	p, err := ctx.CreateQP(&asked, nil)
	if err != nil {
		return provider.Queues{}, err
	}
	asked = init // the kernel's answer
	return p.Finish(resp)
}

// CreateSRQ is CreateQP for an SRQ.
func CreateSRQ(d provider.Driver, dev provider.Device, init provider.SRQInit, resp []byte) (provider.RQ, error) {
	ctx, err := d.NewContext(dev)
	if err != nil {
		return nil, err
	}
	asked := init
	p, err := ctx.CreateSRQ(&asked, nil)
	if err != nil {
		return nil, err
	}
	asked = init // the kernel's answer
	return p.Finish(resp)
}

// SiwTake plays the kernel taking every element of a siw work queue of
// elements of size bytes: it clears their flags. The benchmarks are one
// goroutine, so the fake kernel writes plainly, as the harness's does
// (a release store, a plain MOV on amd64): an atomic Store per element,
// an XCHG, would charge the Go rows for the fake kernel.
func SiwTake(b []byte, size int) {
	for off := 0; off+size <= len(b); off += size {
		binary.NativeEndian.PutUint16(b[off+8:], 0)
	}
}

// SiwFillCQ writes the receive completion the bench rows poll into every
// element of a siw CQ of n elements and makes them all valid.
func SiwFillCQ(b []byte, n int) {
	for i := range n {
		e := b[i*32 : i*32+32]
		clear(e)
		binary.NativeEndian.PutUint64(e[0:], 9)
		binary.NativeEndian.PutUint32(e[12:], 4096)
		binary.NativeEndian.PutUint64(e[24:], 0x11)
	}
	SiwRefillCQ(b, n)
}

// SiwRefillCQ makes every element of a siw CQ valid again: flags VALID,
// opcode RECEIVE, status 0; written plainly, as SiwTake.
func SiwRefillCQ(b []byte, n int) {
	for i := range n {
		binary.NativeEndian.PutUint32(b[i*32+8:], abi.SIW_WQE_VALID|abi.SIW_OP_RECEIVE<<8)
	}
}

// Pause keeps the fake kernel's turns off a Go row's clock, as the C
// harnesses keep them off theirs (mlx5.c's bench_now around each restart
// and refill). The benchmark's own b.StopTimer cannot: it reads the
// memory statistics, a stop of the world, every time it stops and starts
// the clock, and the threads the stop wakes then run beside the timed
// loop (a profile of the mlx5 receive row had 60 % of its samples in
// their futex wake-ups and context switches). The row reports its time
// with Report.
type Pause struct{ off time.Duration }

// Run runs the turn f off the clock.
func (p *Pause) Run(f func()) {
	t := time.Now()
	f()
	p.off += time.Since(t)
}

// Report sets b's ns/op to the time of its loop less the pauses; call it
// after the loop. HostCost takes it for the row's time.
func (p *Pause) Report(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed()-p.off)/float64(b.N), "ns/op")
}

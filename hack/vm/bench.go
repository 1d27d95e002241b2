package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/purerdma/purerdma/internal/vm"

	"github.com/purerdma/purerdma/internal/vm/fetch"
	"github.com/purerdma/purerdma/internal/vm/plan"
)

// The lines of benchcmp compare's output that bench reads (hack/benchcmp/compare.go).
const (
	benchBegin = "BENCH-BEGIN"
	benchEnd   = "BENCH-END"
	benchInfo  = "BENCH-INFO: "
)

// benchFile is where bench writes its report, relative to the top of the
// repository: docs/benchmarks.md for Debian 12's own kernel, and a file
// per series beside it for the others (make bench KERNEL=6.12), so that
// one kernel's run does not replace another's. A run of another kind
// (variant: "aa", benchcmp compare -aa, C in both columns; "cross",
// -cross, each column's client against the other's server) goes beside
// them as benchmarks-<variant>*.md.
func benchFile(series, variant string) string {
	name := "benchmarks"
	if variant != "" {
		name += "-" + variant
	}
	if series == "" || series == fetch.DefaultSeries {
		return filepath.Join("docs", name+".md")
	}
	return filepath.Join("docs", name+"-linux-"+series+".md")
}

// bench boots the guest with the C tools, runs benchcmp compare (with
// args, the flags after "--") and writes benchFile from its table.
func bench(env *fetch.Env, o options, args []string) error {
	console, elapsed, gerr := runBenchcmp(env, o, args, "compare")
	table, info, err := parseBench(console)
	if err != nil {
		if gerr != nil {
			return fmt.Errorf("%v; %v", gerr, err)
		}
		return err
	}
	host := hostInfo()
	md := renderBench(time.Now().UTC(), host, info, table, elapsed)
	path := filepath.Join(repoRoot(), benchFile(o.kernel, benchVariant(info)))
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		return err
	}
	env.Logf("wrote %s", path)
	return gerr
}

// benchVariant names the kind of run the guest's BENCH-INFO lines
// report: "aa", "cross" or "" (Go against C).
func benchVariant(info map[string]string) string {
	for _, v := range []string{"aa", "cross"} {
		if info[v] != "" {
			return v
		}
	}
	return ""
}

// benchcmpPath is where the guest carries the harness, beside rperf,
// which it runs as the Go side.
const benchcmpPath = "/opt/purerdma/bin/benchcmp"

// runBenchcmp boots the guest with the C tools and runs benchcmp
// (hack/benchcmp) with subcommand and its flags (those of args after
// "--"); it returns the console's output and how long the guest took.
// The harness is built for these runs only: the test images carry the
// project's commands (cmd/...), not its tools for judging them.
func runBenchcmp(env *fetch.Env, o options, args []string, subcommand ...string) (string, time.Duration, error) {
	o.ctools = true
	_, rargs := splitArgs(args)
	var console bytes.Buffer
	o.console = io.MultiWriter(os.Stdout, &console)
	start := time.Now()
	err := runGuest(env, o, plan.ModeTest, func(im *vm.Image, b *builder) error {
		bin, err := b.harness()
		if err != nil {
			return err
		}
		im.Files[benchcmpPath] = bin
		im.Plan.Steps = []plan.Step{{
			Name: "benchcmp " + subcommand[0],
			Path: benchcmpPath,
			Args: append(subcommand, rargs...),
		}}
		return nil
	})
	return console.String(), time.Since(start), err
}

// parseBench finds the table between the markers in the console output
// and the BENCH-INFO key=value pairs.
func parseBench(out string) (table string, info map[string]string, err error) {
	info = map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if line = strings.TrimRight(line, "\r "); strings.HasPrefix(line, benchInfo) {
			parseInfo(strings.TrimPrefix(line, benchInfo), info)
		}
	}
	table, ok := between(out, benchBegin, benchEnd)
	if !ok || strings.Count(table, "\n") < 3 {
		return "", info, errors.New("no benchmark table (" + benchBegin + " ... " + benchEnd + ") in the guest's output")
	}
	return table, info, nil
}

// parseInfo reads "k=v k2=v2", or "k=v with spaces" when there is one "=".
func parseInfo(s string, info map[string]string) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return
	}
	if !strings.Contains(v, "=") {
		info[k] = v
		return
	}
	for _, f := range strings.Fields(s) {
		if k, v, ok := strings.Cut(f, "="); ok {
			info[k] = v
		}
	}
}

// hostDesc describes the machine that ran QEMU.
type hostDesc struct {
	cpu    string
	cores  int
	kernel string
}

func hostInfo() hostDesc {
	h := hostDesc{cpu: "unknown", cores: runtime.NumCPU(), kernel: "unknown"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				h.cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	if out, err := exec.Command("uname", "-srm").Output(); err == nil {
		h.kernel = strings.TrimSpace(string(out))
	}
	return h
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// renderBench is the report benchFile holds.
func renderBench(date time.Time, h hostDesc, info map[string]string, table string, elapsed time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# rperf against perftest, rpma against librpma: benchmarks\n\n")
	fmt.Fprintf(&b, "Generated by `make bench` (`go run ./hack/vm bench`, which runs `benchcmp compare` in the VM).\n\n")
	fmt.Fprintf(&b, "- Date: %s\n", date.Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "- Host: %s, %d cores, %s\n", h.cpu, h.cores, h.kernel)
	fmt.Fprintf(&b, "- Guest: Linux %s; QEMU TCG (no KVM), soft-RoCE rxe0, loopback in one guest\n", orUnknown(info["kernel"]))
	fmt.Fprintf(&b, "- Device: %s, GID index %s\n", orUnknown(info["device"]), orUnknown(info["gid_index"]))
	fmt.Fprintf(&b, "- Rounds: %s per side, alternating Go, C, Go, C...; sizes %s\n", orUnknown(info["rounds"]), orUnknown(info["sizes"]))
	fmt.Fprintf(&b, "- Iterations per run: %s\n", orUnknown(info["iterations"]))
	if e := info["go_env"]; e != "" {
		fmt.Fprintf(&b, "- The Go side's environment: %s\n", e)
	}
	if info["aa"] != "" {
		fmt.Fprintf(&b, "- **A/A run** (`-aa`): the Go column is C too, perftest's tools and the librpma peer run first in each round; the table shows what the method makes of two equal stacks\n")
	}
	if info["cross"] != "" {
		fmt.Fprintf(&b, "- **Cross run** (`-cross`): the Go column is Go's clients against C's servers, the C column C's clients against Go's servers; a gap that follows the client keeps its side, one that follows the server changes it\n")
	}
	fmt.Fprintf(&b, "- Time: the comparison %s, the whole boot %v\n\n", orUnknown(info["elapsed"]), elapsed.Round(time.Second))
	b.WriteString(table)
	b.WriteString(`
## Reading the table

Go is rperf (cmd/rperf), C is perftest's ib_* programs (Debian's perftest
package) with the same arguments (-d, -x, -s, -n, -F). Each run is a fresh
server and client pair on loopback, two processes on either side; the
figures are the client's. Each cell is the median over the
rounds; Go/C is the ratio of the medians. For latency (t_typical, perftest's
median) lower is better, so Go/C < 1 means Go is faster; for bandwidth and
message rate higher is better, so Go/C > 1 means Go is faster. Small
messages' bandwidth is derived from the message rate, as perftest's table
rounds it to 0.01 MB/s.

"Go/C by round (IQR)" is the middle half of the ratios of each round's Go
run to the C run right after it: the noise one comparison carries. Where
that range holds 1.00, the two stacks are not told apart by this machine.
Under TCG a run tends to land in one of two modes (for reads, about 75 or
about 120 µs), whichever stack runs; the median over 9 rounds damps that,
the IQR shows it.

"p" is the two-sided p-value of a rank test (Mann–Whitney, exact) of
the Go runs against the C runs of the row: how likely a difference at
least this large between the two columns is if both stacks' runs came
from one distribution. Below 0.05 the rounds tell the stacks apart;
above it a median ratio off 1.00 is within what this machine's noise
makes of two equal stacks.

The second table is what rxe's port counters (sysfs hw_counters) rose by
during each run, per message, on either side: packets sent, RNR NAKs
(a send that found no receive posted) and retransmissions. Equal counts
mean both stacks put the same traffic on the wire, so a gap in the first
table is time spent in the hosts, not in the protocol.

The rpma_* rows compare the Go rpma package (rperf rpma) with a C
program on Debian's librpma (test/rpmabench) doing the same: a read, a
write followed by a visibility flush, and a send/receive ping-pong (half
the round trip), each timed per iteration; the cell is the median.

The guest runs under QEMU's TCG, an emulator, on a shared host: absolute
numbers are far below real hardware and vary between boots by tens of
percent. The rounds alternate Go and C so that both sides see the same
noise: the ratio from one boot is the figure that counts, not the absolute
values, nor a comparison across files.
`)
	return b.String()
}

// repoRoot is the directory with go.mod above the working directory.
func repoRoot() string {
	dir, _ := os.Getwd()
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return dir
}

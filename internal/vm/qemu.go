package vm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/purerdma/purerdma/internal/vm/plan"
)

// machine is how QEMU boots a guest of one architecture. No KVM: on these
// hosts a KVM guest hangs, and TCG is fast enough for a few VM seconds.
type machine struct {
	binary  string
	args    []string
	console string
	cmdline string // kernel parameters besides the console
}

var machines = map[string]machine{
	// The TSC as clock source: the kernel otherwise picks the HPET under
	// TCG, whose reads the vDSO cannot do, so every clock_gettime is a
	// system call (Go's time.Now included; C's perftest reads the TSC).
	// no_timer_check: on a loaded host the emulated timer interrupt can
	// miss the kernel's boot-time check, which then panics ("IO-APIC +
	// timer doesn't work!").
	"amd64": {binary: "qemu-system-x86_64", args: []string{"-cpu", "max", "-m", "2048"}, console: "ttyS0", cmdline: "clocksource=tsc tsc=reliable no_timer_check"},
	// Debian's arm64 kernel signs its return addresses (pointer
	// authentication); TCG's emulation of the architected QARMA5 cipher
	// made the guest about four times slower than the cheap
	// implementation-defined one (boot to init 19 s against 5 s).
	"arm64": {binary: "qemu-system-aarch64", args: []string{"-M", "virt", "-cpu", "max,pauth-impdef=on", "-m", "2048"}, console: "ttyAMA0"},
}

// Boot runs the guest until init reports its status, the guest dies or the
// time limit passes, with the serial console copied to out. interactive
// connects the console to this terminal. extra goes to QEMU as it is (the
// pair command's NIC).
func Boot(ctx context.Context, arch, kernel, initrd string, timeout time.Duration, out io.Writer, interactive bool, extra ...string) (int, error) {
	m, ok := machines[arch]
	if !ok {
		return 0, fmt.Errorf("no machine for %s", arch)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := append([]string{"-accel", "tcg,thread=multi", "-smp", "2", "-nographic", "-no-reboot", "-nic", "none"}, m.args...)
	args = append(args, extra...)
	args = append(args, "-kernel", kernel, "-initrd", initrd,
		"-append", strings.TrimSpace("console="+m.console+" panic=-1 quiet "+m.cmdline))
	cmd := exec.CommandContext(ctx, m.binary, args...)
	cmd.Stderr = os.Stderr
	if interactive {
		cmd.Stdin, cmd.Stdout = os.Stdin, os.Stdout
		return 0, cmd.Run()
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	status := -1
	var early earlyDeath
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		fmt.Fprintln(out, line)
		early.see(line)
		if s, ok := strings.CutPrefix(line, plan.StatusPrefix); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
				status = n
			}
		}
	}
	err = cmd.Wait()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return 0, fmt.Errorf("guest killed after the %v time limit", timeout)
	case status < 0 && early.died():
		return 0, fmt.Errorf("guest: %w (qemu: %v)", ErrKernelDied, err)
	case status < 0:
		return 0, fmt.Errorf("guest died without reporting a status (qemu: %v)", err)
	}
	return status, nil
}

// ErrKernelDied is Boot's error when the guest's kernel panicked before
// init printed anything: no code of this module had run. Under TCG with
// two vCPUs the kernel's boot-time text patching has crashed this way
// (an "Oops: int3" in sched_clock_cpu as the sched_clock_stable static
// key was switched, 3.4 s into a 6.12 boot; seen once, on 2026-11-28,
// after many hundreds of boots; docs/testing.md): the emulator ran a
// stale translation of the patched instruction. The callers boot again, once, and say so.
var ErrKernelDied = errors.New("the kernel panicked before init started")

// earlyDeath watches the console for a kernel panic before init's first
// line.
type earlyDeath struct {
	initStarted, panicked bool
}

func (e *earlyDeath) see(line string) {
	switch {
	case strings.Contains(line, "purerdma-vm:") || strings.Contains(line, "purerdma-pair:"):
		e.initStarted = true
	case !e.initStarted && strings.Contains(line, "Kernel panic - not syncing"):
		e.panicked = true
	}
}

// died reports whether the kernel panicked before init printed.
func (e *earlyDeath) died() bool { return e.panicked && !e.initStarted }

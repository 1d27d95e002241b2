package guest

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/vm/plan"
)

// run runs the plan's steps in order and returns the combined status.
func run(p *plan.Plan) int {
	env := environ(p)
	if p.Mode == plan.ModeShell {
		fmt.Println("purerdma-vm: shell; exit it to power off")
		runStep(plan.Step{Name: "shell", Path: p.Shell, Args: []string{"-i"}, Dir: "/"}, env)
		return 0
	}
	if p.Hog > 0 {
		startHog(p.Hog)
	}
	status := 0
	for _, s := range p.Steps {
		if code := runStep(s, env); code != 0 {
			status = 1
		}
	}
	return status
}

// guestLabel names the architecture and the running kernel in every step's
// start and result lines, so that a run over several kernels says which one
// each result came from: "amd64, Linux 6.12.117+deb12-amd64".
var guestLabel = runtime.GOARCH + ", Linux " + kernelRelease()

// kernelRelease is uname -r.
func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// startHog starts n busy loops, each on its own OS thread, at the tests'
// priority: with the guest's 2 vCPUs, the test programs then get about
// half the CPU they would, and their threads are descheduled at random
// points, which is what a busy host did to the runs where the siw races
// showed.
func startHog(n int) {
	fmt.Printf("purerdma-vm: %d CPU hogs beside the tests\n", n)
	for range n {
		go func() {
			runtime.LockOSThread()
			x := uint64(1)
			for {
				// Work the compiler keeps: an xorshift that never ends.
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				hogSink.Store(x)
			}
		}()
	}
}

var hogSink atomic.Uint64

func runStep(s plan.Step, env []string) int {
	fmt.Printf("%srun %s (%s)\n", plan.StepPrefix, s.Name, guestLabel)
	start := time.Now()
	cmd := exec.Command(s.Path, s.Args...)
	cmd.Dir = s.Dir
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	code := 0
	if err := cmd.Run(); err != nil {
		code = 1
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 {
			code = ee.ExitCode()
		}
		fmt.Printf("purerdma-vm: %s: %v\n", s.Name, err)
	}
	fmt.Printf("%s%s exit %d (%s, %v)\n", plan.StepPrefix, s.Name, code, guestLabel, time.Since(start).Round(time.Millisecond))
	return code
}

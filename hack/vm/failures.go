package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/purerdma/purerdma/internal/vm"
	"github.com/purerdma/purerdma/internal/vm/plan"
)

// failures passes a guest's console through and keeps the lines that say
// what failed, so that they can be repeated when the guest ends: a CI log
// that keeps only its last lines then still names the failed test and its
// message, not only "the guest failed".
//
// A test's messages come before its "--- FAIL" line under go test -v
// (streamed as they are logged, after "=== RUN" or "=== CONT" names the
// test) and after it without -v (indented under it): the messages of the
// running test are held until it passes or fails, and a failed test's
// follow its "--- FAIL" line either way.
type failures struct {
	mu      sync.Mutex
	w       io.Writer
	in      vm.Lines
	lines   []string
	running map[string]string   // per guest prefix: the test whose messages come now
	held    map[string][]string // per guest prefix and test: its messages so far
	under   int                 // message lines still kept under the last "--- FAIL"
	more    int                 // lines not kept once maxFailureLines were
}

const (
	maxFailureLines = 80 // in all
	maxUnderFail    = 12 // of one test's messages
)

// testStart names the test whose output follows; testEnd is a test's
// result line.
var (
	testStart = regexp.MustCompile(`^=== (RUN|CONT|NAME) +(\S+)`)
	testEnd   = regexp.MustCompile(`^--- (FAIL|PASS|SKIP): (\S+)`)
)

// failureLine matches what is kept without a "--- FAIL" above it: a
// panic, the runtime's fatal errors, a test binary's timeout, the kernel's
// BUG, oops and panic lines, and a step's non-zero exit.
var failureLine = regexp.MustCompile(`^(panic: |fatal error: |FAIL\b)|` +
	`test timed out after|` +
	`\] (BUG: |Oops|Kernel panic|WARNING: CPU)|` +
	regexp.QuoteMeta(plan.StepPrefix) + `\S+ exit [1-9]`)

// kernelLine is a kernel message's time stamp, "[  205.080609] ".
var kernelLine = regexp.MustCompile(`^\[ *\d+\.\d+\] `)

func newFailures(w io.Writer) *failures {
	return &failures{w: w, running: map[string]string{}, held: map[string][]string{}}
}

func (f *failures) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.in.Feed(p, f.line)
	return f.w.Write(p)
}

func (f *failures) line(l string) {
	l = strings.TrimRight(l, "\r")
	guest := vm.GuestPrefix.FindString(l)
	text := l[len(guest):]
	body := strings.TrimLeft(text, " ")
	message := strings.HasPrefix(text, "    ") && !strings.HasPrefix(body, "--- ")
	if m := testStart.FindStringSubmatch(text); m != nil {
		f.running[guest] = m[2]
	}
	switch m := testEnd.FindStringSubmatch(body); {
	case m != nil && m[1] == "FAIL":
		f.keep(l)
		for _, h := range f.held[guest+m[2]] {
			f.keep(h)
		}
		delete(f.held, guest+m[2])
		f.under = maxUnderFail
	case m != nil:
		delete(f.held, guest+m[2])
		f.under = 0
	case message && f.under > 0:
		// Without -v, a failed test's messages are indented under its
		// "--- FAIL" line.
		f.keep(l)
		f.under--
	case message:
		// Under -v, the running test's messages come before its result.
		if k := guest + f.running[guest]; len(f.held[k]) < maxUnderFail {
			f.held[k] = append(f.held[k], l)
		}
	case kernelLine.MatchString(text) && !failureLine.MatchString(text):
		// The kernel's chatter may come between a test's lines.
	default:
		f.under = 0
		if failureLine.MatchString(text) {
			f.keep(l)
		}
	}
}

func (f *failures) keep(l string) {
	if len(f.lines) == maxFailureLines {
		f.more++
		return
	}
	f.lines = append(f.lines, l)
}

// report returns the kept lines under a heading that names the run, or ""
// when none were kept.
func (f *failures) report(run string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.lines) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "vm: what failed in the %s:\n", run)
	for _, l := range f.lines {
		fmt.Fprintf(&b, "vm:   %s\n", l)
	}
	if f.more > 0 {
		fmt.Fprintf(&b, "vm:   (%d lines more)\n", f.more)
	}
	return b.String()
}

//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/purerdma/purerdma/internal/vm"
	"github.com/purerdma/purerdma/internal/vm/plan"
)

// console sorts the guest's console lines: the program's output (between
// init's frame lines) goes to stdout as it comes, so go test reads it as
// the test binary's own; the rest (the kernel's boot, init's set-up) is
// kept for stderr, shown with -v or when the guest fails. With -pair each
// line starts with its guest's name, "[a] ".
type console struct {
	mu      sync.Mutex
	stdout  io.Writer
	stderr  io.Writer
	verbose bool
	in      vm.Lines
	inStep  map[string]bool // per guest prefix
	codes   map[string]int  // per guest prefix: the program's exit status
	setup   bytes.Buffer
	// The host's clock at the program's start and end in the first
	// guest, for -v's account of where the time went.
	started, ended time.Time
}

func newConsole(stdout, stderr io.Writer, verbose bool) *console {
	return &console{stdout: stdout, stderr: stderr, verbose: verbose, inStep: map[string]bool{}, codes: map[string]int{}}
}

// stepEnd matches init's line after the program: "NAME exit CODE (".
var stepEnd = regexp.MustCompile(`^\S+ exit (\d+) \(`)

func (c *console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.in.Feed(p, c.line)
	return len(p), nil
}

func (c *console) line(l string) {
	guest := vm.GuestPrefix.FindString(l)
	body := strings.TrimPrefix(l, guest)
	if frame, ok := strings.CutPrefix(body, plan.StepPrefix); ok {
		if strings.HasPrefix(frame, "run ") {
			c.inStep[guest] = true
			if c.started.IsZero() {
				c.started = time.Now()
			}
		} else if m := stepEnd.FindStringSubmatch(frame); m != nil {
			c.inStep[guest] = false
			c.codes[guest], _ = strconv.Atoi(m[1])
			if c.ended.IsZero() {
				c.ended = time.Now()
			}
		}
		c.other(l)
		return
	}
	if c.inStep[guest] {
		fmt.Fprintln(c.stdout, l)
		return
	}
	c.other(l)
}

func (c *console) other(l string) {
	if c.verbose {
		fmt.Fprintln(c.stderr, l)
	}
	fmt.Fprintln(&c.setup, l)
}

// flush passes on a last line without a newline.
func (c *console) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.in.Flush(c.line)
}

// exitCode is the program's exit status, the highest of the guests', and
// whether each of the guests ran it to the end.
func (c *console) exitCode(guests int) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.codes) < guests {
		return 0, false
	}
	code := 0
	for _, n := range c.codes {
		code = max(code, n)
	}
	return code, true
}

// dumpSetup writes the lines that were not the program's to w.
func (c *console) dumpSetup(w io.Writer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w.Write(c.setup.Bytes())
}

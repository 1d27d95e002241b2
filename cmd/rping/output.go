package main

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// output serializes the writes of the goroutines to stdout and stderr.
// After a fatal CM event it drops everything, as rping's exit(3) from its
// CM thread ends the output there.
type output struct {
	mu             sync.Mutex
	stdout, stderr io.Writer
	debug          bool
	fatal          atomic.Bool
	fatalCode      atomic.Int32
	fatalDone      chan struct{}
	fatalOnce      sync.Once
}

func (o *output) printf(format string, a ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.fatal.Load() {
		fmt.Fprintf(o.stdout, format, a...)
	}
}

func (o *output) eprintf(format string, a ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.fatal.Load() {
		fmt.Fprintf(o.stderr, format, a...)
	}
}

// debugf is DEBUG_LOG.
func (o *output) debugf(format string, a ...any) {
	if o.debug {
		o.printf(format, a...)
	}
}

// perror prints msg and the error as perror(3) does.
func (o *output) perror(msg string, err error) {
	o.eprintf("%s: %s\n", msg, strerror(err))
}

// exit is exit(code) from a thread that is not the main one: the output
// ends and the main flow unwinds.
func (o *output) exit(code int) {
	o.fatalOnce.Do(func() {
		o.mu.Lock()
		o.fatalCode.Store(int32(code))
		o.fatal.Store(true)
		o.mu.Unlock()
		close(o.fatalDone)
	})
}

// strerror is the errno's text as glibc writes it, when err carries one.
func strerror(err error) string {
	var en syscall.Errno
	if errors.As(err, &en) {
		s := en.Error()
		r, n := utf8.DecodeRuneInString(s)
		return string(unicode.ToUpper(r)) + s[n:]
	}
	return err.Error()
}

// errnoOf is the errno in err, for the numbers rping prints, or -1.
func errnoOf(err error) int {
	var en syscall.Errno
	if errors.As(err, &en) {
		return int(en)
	}
	return -1
}

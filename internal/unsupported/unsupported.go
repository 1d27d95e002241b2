// Package unsupported is the one error of purerdma's stubs: on operating
// systems other than Linux, and on Linux built with the purerdma_stub tag
// (which selects the same stubs, so that test/unsupported runs on the
// host), every call that would reach the kernel returns Error. The stubs
// are the sys_other.go files (and a few like them) beside each package's
// *_linux.go files; see docs/architecture.md, "Other operating systems".
package unsupported

import (
	"errors"
	"runtime"
	"strings"
)

// Error returns the error of the operation what, which needs the Linux
// kernel: it matches errors.ErrUnsupported and each of also (a device
// lookup adds uverbs.ErrNoDevice), and its text names them after the
// operation and the operating system.
func Error(what string, also ...error) error {
	return &osError{what: what, kinds: append([]error{errors.ErrUnsupported}, also...)}
}

type osError struct {
	what  string
	kinds []error
}

func (e *osError) Error() string {
	var b strings.Builder
	b.WriteString("purerdma: ")
	b.WriteString(e.what)
	b.WriteString(" on ")
	b.WriteString(runtime.GOOS)
	for _, k := range e.kinds {
		b.WriteString(": ")
		b.WriteString(k.Error())
	}
	return b.String()
}

func (e *osError) Unwrap() []error { return e.kinds }

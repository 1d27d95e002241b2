package soak_test

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// kernelLog follows the guest kernel's log (/dev/kmsg) from the moment it
// is opened, and keeps the messages that show a kernel defect: a BUG, a
// WARNING, a refcount or list corruption, an oops, a sanitizer's report.
// The soak fails on any: the siw listener defect (docs/kernel-notes.md)
// shows first as "refcount_t: underflow; use-after-free" and can end in
// "kernel BUG at lib/list_debug.c".
type kernelLog struct {
	fd      int
	msgs    int      // messages read
	bad     []string // the messages that show a defect, with a few after each
	context int      // messages still to keep after the last bad one
	lost    int      // times the reader fell behind the ring and lost messages
	err     error
}

// badKernel are the substrings of a kernel message that fail the soak.
var badKernel = []string{
	"BUG:", "kernel BUG", "WARNING:", "refcount_t", "list_del corruption", "list_add corruption",
	"Oops", "general protection fault", "UBSAN", "KASAN", "use-after-free", "soft lockup", "hard LOCKUP",
}

// keptAfter is how many messages after a bad one are kept (the trace).
const keptAfter = 30

func openKernelLog() *kernelLog {
	k := &kernelLog{fd: -1}
	fd, err := unix.Open("/dev/kmsg", unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		k.err = err
		return k
	}
	// From now on: what the kernel said before the soak is not its.
	if _, err := unix.Seek(fd, 0, unix.SEEK_END); err != nil {
		unix.Close(fd)
		k.err = err
		return k
	}
	k.fd = fd
	return k
}

// read takes the messages the kernel logged since the last read.
func (k *kernelLog) read() {
	if k.fd < 0 {
		return
	}
	buf := make([]byte, 8192)
	for {
		n, err := unix.Read(k.fd, buf)
		switch {
		case errors.Is(err, unix.EAGAIN):
			return
		case errors.Is(err, unix.EPIPE):
			// Overwritten before we read them; the next read goes on
			// with the oldest left.
			k.lost++
			continue
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			k.err = err
			return
		}
		k.add(string(buf[:n]))
	}
}

// add takes one record: "prio,seq,usec,flags;text\n" and continuation
// lines (" KEY=value").
func (k *kernelLog) add(rec string) {
	k.msgs++
	text, _, _ := strings.Cut(rec, "\n")
	if _, t, ok := strings.Cut(text, ";"); ok {
		text = t
	}
	for _, b := range badKernel {
		if strings.Contains(text, b) {
			k.bad = append(k.bad, text)
			k.context = keptAfter
			return
		}
	}
	if k.context > 0 {
		k.context--
		k.bad = append(k.bad, "  "+text)
	}
}

// defects counts the bad messages, less the context kept after them.
func (k *kernelLog) defects() int {
	n := 0
	for _, l := range k.bad {
		if !strings.HasPrefix(l, "  ") {
			n++
		}
	}
	return n
}

// summary writes the log's line, and the bad messages; it reports whether
// the kernel said nothing bad.
func (k *kernelLog) summary(b *strings.Builder) bool {
	k.read()
	if k.fd >= 0 {
		unix.Close(k.fd)
		k.fd = -1
	}
	if k.err != nil {
		fmt.Fprintf(b, "soak kernel log: %v\n", k.err)
		return false
	}
	lost := ""
	if k.lost > 0 {
		lost = fmt.Sprintf(" (fell behind the ring %d times)", k.lost)
	}
	fmt.Fprintf(b, "soak kernel log: %d messages during the soak%s, %d showing a kernel defect (BUG, WARNING, refcount or list corruption, oops, sanitizer)\n",
		k.msgs, lost, k.defects())
	for _, l := range k.bad {
		fmt.Fprintf(b, "  kernel: %s\n", l)
	}
	return k.defects() == 0 && k.lost == 0
}

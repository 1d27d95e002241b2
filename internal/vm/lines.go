package vm

import "bytes"

// Lines cuts a guest console's writes into lines for those who read it as
// it comes (hack/vm's failure summary, cmd/rdmavm's console sorter): a
// write may end within a line, or hold several.
type Lines struct{ buf []byte }

// Feed appends p and calls fn with each whole line, without its "\n"; the
// rest waits for the next Feed.
func (l *Lines) Feed(p []byte, fn func(string)) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return
		}
		fn(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
}

// Flush calls fn with what is left, a last line without "\n", if any.
func (l *Lines) Flush(fn func(string)) {
	if len(l.buf) > 0 {
		fn(string(l.buf))
		l.buf = nil
	}
}

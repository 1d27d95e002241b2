//go:build !linux || purerdma_stub

package rdmacm

import (
	"syscall"

	"github.com/purerdma/purerdma/internal/unsupported"
	"github.com/purerdma/purerdma/uverbs"
)

// NewEventChannel opens the connection manager (sys_linux.go); without the
// Linux kernel there is none to open, and the error matches
// uverbs.ErrNoDevice as well as errors.ErrUnsupported.
func NewEventChannel() (*EventChannel, error) {
	return nil, unsupported.Error("open "+Path, uverbs.ErrNoDevice)
}

// write is not reached: no channel opens.
func write(fd int, cmd uint32, req []byte, respOff int, resp []byte) error {
	return unsupported.Error("rdma_cm command")
}

// writeUnsignalled is not reached either.
func writeUnsignalled(fd int, cmd uint32, req []byte, respOff int, resp []byte) error {
	return write(fd, cmd, req, respOff, resp)
}

// readable is false: no file of the kernel's is there to read.
func readable(syscall.RawConn) bool { return false }

//go:build !linux || purerdma_stub

package ucmd

import "github.com/purerdma/purerdma/internal/unsupported"

// The stubs of sys_linux.go: without the Linux kernel there is no uverbs
// file to command. No FD can be opened here, so they are not reached.

func (f *FD) write(c *Cmd) error { return cmdError(c, unsupported.Error("write")) }

func ioctl(fd int, req uint32, arg []byte) error { return unsupported.Error("ioctl") }

// Doorbell writes a POST_SEND command with no work requests for the QP
// with handle qp; without the Linux kernel it fails.
func (f *FD) Doorbell(qp uint32) error { return unsupported.Error("doorbell") }

// Notify writes REQ_NOTIFY_CQ for the CQ with handle cq; without the
// Linux kernel it fails.
func (f *FD) Notify(cq uint32, solicitedOnly bool) error { return unsupported.Error("notify") }

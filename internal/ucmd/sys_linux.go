//go:build !purerdma_stub

package ucmd

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/abi"
)

// This file holds the package's system calls; sys_other.go stubs them.

func (f *FD) write(c *Cmd) error {
	in, out, err := encodeWrite(c)
	if err != nil {
		return err
	}
	_, err = unix.Write(f.fd, in)
	runtime.KeepAlive(out) // its address is inside in, hidden from the GC
	if err != nil {
		return cmdError(c, err)
	}
	n := copy(c.Resp, out)
	copy(c.DrvOut, out[n:])
	return nil
}

// ioctl calls ioctl(2) with a pointer argument.
func ioctl(fd int, req uint32, arg []byte) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(bufPtr(arg)))
	if errno != 0 {
		return errno
	}
	return nil
}

// Doorbell writes a POST_SEND command with no work requests for the QP
// with handle qp: the doorbell of providers whose send queue lives in user
// memory. It is on the data path, so it builds the command on the stack
// and calls write(2) directly, without allocating.
func (f *FD) Doorbell(qp uint32) error {
	var resp abi.PostSendResp
	var cmd struct {
		hdr abi.CmdHdr
		req abi.PostSend
	}
	cmd.hdr = abi.CmdHdr{
		Command:  abi.IB_USER_VERBS_CMD_POST_SEND,
		InWords:  uint16(unsafe.Sizeof(cmd) / 4),
		OutWords: uint16(unsafe.Sizeof(resp) / 4),
	}
	cmd.req = abi.PostSend{
		Response: uint64(uintptr(unsafe.Pointer(&resp))),
		QPHandle: qp,
		// The kernel checks wqe_size even with no requests; rdma-core sends
		// sizeof(struct ibv_send_wr).
		WqeSize: sizeofIbvSendWR,
	}
	// resp lives on this stack and its address hides in cmd; the runtime
	// never moves a stack while its goroutine is in a system call. The
	// write does not block (rxe runs its requester and returns), so it
	// goes in as a raw system call, without the scheduler's hand-off.
	_, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(f.fd), uintptr(unsafe.Pointer(&cmd)), unsafe.Sizeof(cmd))
	runtime.KeepAlive(&resp)
	if errno != 0 {
		return errno
	}
	return nil
}

// Notify writes REQ_NOTIFY_CQ for the CQ with handle cq. Arming sits on
// the completion path, so, like Doorbell, it goes straight to write(2)
// with the command on the stack.
func (f *FD) Notify(cq uint32, solicitedOnly bool) error {
	var cmd struct {
		hdr abi.CmdHdr
		req abi.ReqNotifyCQ
	}
	cmd.hdr = abi.CmdHdr{Command: abi.IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, InWords: uint16(unsafe.Sizeof(cmd) / 4)}
	cmd.req.CQHandle = cq
	if solicitedOnly {
		cmd.req.SolicitedOnly = 1
	}
	// Arming only sets a flag in the kernel: a raw system call, as for
	// the doorbell.
	_, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(f.fd), uintptr(unsafe.Pointer(&cmd)), unsafe.Sizeof(cmd))
	if errno != 0 {
		return errno
	}
	return nil
}

// sizeofIbvSendWR is sizeof(struct ibv_send_wr) on 64-bit platforms.
const sizeofIbvSendWR = 128

//go:build !purerdma_stub

package rdmacm

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
)

// This file holds the package's system calls; sys_other.go stubs them.

// NewEventChannel opens the connection manager (rdma_create_event_channel).
func NewEventChannel() (*EventChannel, error) {
	fd, err := unix.Open(Path, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("rdmacm: open %s: %w", Path, err)
	}
	f := os.NewFile(uintptr(fd), Path)
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("rdmacm: %w", err)
	}
	return &EventChannel{file: f, raw: raw, ids: map[uint64]*ID{}, reader: make(chan struct{}, 1), grown: make(chan struct{})}, nil
}

// write runs one rdma_cm command on fd: the header, then req. When resp is
// not nil, the request's first 8 bytes at respOff are the response pointer,
// which write fills with a heap buffer it copies into resp afterwards.
func write(fd int, cmd uint32, req []byte, respOff int, resp []byte) error {
	hdr := abi.UcmCmdHdr{Cmd: cmd, In: uint16(len(req)), Out: uint16(len(resp))}
	buf := make([]byte, 0, 8+len(req))
	buf = append(buf, ucmd.Bytes(&hdr)...)
	buf = append(buf, req...)
	var out []byte
	if resp != nil {
		// The kernel writes to an address hidden in the request, so the
		// buffer must not move during the call as a stack object could:
		// pinning puts it on the heap and keeps it there.
		out = make([]byte, len(resp))
		var pin runtime.Pinner
		pin.Pin(&out[0])
		defer pin.Unpin()
		putU64(buf[8+respOff:], ucmd.Addr(out))
	}
	_, err := unix.Write(fd, buf)
	if err != nil {
		name := fmt.Sprint(cmd)
		if int(cmd) < len(cmdNames) {
			name = cmdNames[cmd]
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	copy(resp, out)
	return nil
}

// writeUnsignalled is write with the calling thread's asynchronous
// signals blocked, for a command the kernel carries out inside the call
// and cannot take back once a signal interrupts it.
//
// That is CONNECT on siw: siw_connect (drivers/infiniband/sw/siw/siw_cm.c)
// opens the TCP connection with a blocking kernel connect. A signal that
// arrives meanwhile makes the connect return ERESTARTSYS, even when the
// handshake has completed; siw then releases the socket, which closes the
// new connection, and the command fails with ERESTARTSYS. A handler
// installed with SA_RESTART, as every one of the Go runtime's is, restarts
// the command, which binds the same address and port again and fails with
// EADDRNOTAVAIL, since the closing connection still holds them. Worse, the
// close reaches the listener before siw has accepted the connection, and a
// siw listener dies of that (docs/kernel-notes.md, siw). A C program rarely
// takes a signal during the connect; a Go program's threads take the
// runtime's preemption signal (SIGURG) all the time.
//
// The signals stay pending and are delivered once the mask is restored;
// process-directed ones go to another thread meanwhile. Left unblocked:
// the synchronous faults, which a blocked one would make fatal, and 32
// and 33, with which the runtime (and glibc) run a system call on every
// thread (syscall.AllThreadsSyscall, Setuid), which would otherwise wait
// for the connect.
func writeUnsignalled(fd int, cmd uint32, req []byte, respOff int, resp []byte) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set, old unix.Sigset_t
	for sig := unix.Signal(1); sig <= 64; sig++ {
		switch sig {
		case unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE, unix.SIGILL, unix.SIGTRAP, unix.SIGSYS, 32, 33:
			continue
		}
		w := uint(unsafe.Sizeof(set.Val[0])) * 8
		set.Val[(uint(sig)-1)/w] |= 1 << ((uint(sig) - 1) % w)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old); err != nil {
		return write(fd, cmd, req, respOff, resp)
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	return write(fd, cmd, req, respOff, resp)
}

var cmdNames = [...]string{
	"CREATE_ID", "DESTROY_ID", "BIND_IP", "RESOLVE_IP", "RESOLVE_ROUTE",
	"QUERY_ROUTE", "CONNECT", "LISTEN", "ACCEPT", "REJECT", "DISCONNECT",
	"INIT_QP_ATTR", "GET_EVENT", "GET_OPTION", "SET_OPTION", "NOTIFY",
	"JOIN_IP_MCAST", "LEAVE_MCAST", "MIGRATE_ID", "QUERY", "BIND",
	"RESOLVE_ADDR", "JOIN_MCAST",
}

// readable reports whether the file behind raw has something to read
// now, without reading it or blocking: poll(2) with no timeout.
func readable(raw syscall.RawConn) bool {
	ok := false
	raw.Control(func(fd uintptr) {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(p, 0)
		ok = err == nil && n > 0 && p[0].Revents&unix.POLLIN != 0
	})
	return ok
}

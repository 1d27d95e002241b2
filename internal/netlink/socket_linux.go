package netlink

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// socket is the kernel's end: an AF_NETLINK socket in non-blocking mode,
// so that Go's poller waits for it and Close wakes a blocked Receive.
type socket struct {
	f   *os.File
	rc  syscall.RawConn
	buf []byte
}

// dial opens and binds a netlink socket and returns the port ID the kernel
// gave it.
func dial(family int) (*socket, uint32, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, family)
	if err != nil {
		return nil, 0, fmt.Errorf("netlink: family %d: %w", family, os.NewSyscallError("socket", err))
	}
	// Extended acks carry the kernel's reason for a refusal, and capped
	// acks spare us the echo of our own request. Kernels before 4.12
	// lack both, which costs only the reason.
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_EXT_ACK, 1)
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_CAP_ACK, 1)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, 0, fmt.Errorf("netlink: %w", os.NewSyscallError("bind", err))
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return nil, 0, fmt.Errorf("netlink: %w", os.NewSyscallError("getsockname", err))
	}
	nl, ok := sa.(*unix.SockaddrNetlink)
	if !ok {
		unix.Close(fd)
		return nil, 0, fmt.Errorf("netlink: getsockname returned %T", sa)
	}
	f := os.NewFile(uintptr(fd), "netlink")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("netlink: %w", err)
	}
	// 32 KiB is the most the kernel puts in one dump datagram, and it
	// sizes its dump datagrams by the buffers we receive into.
	return &socket{f: f, rc: rc, buf: make([]byte, 32<<10)}, nl.Pid, nil
}

func (s *socket) Send(b []byte) error {
	var err error
	cerr := s.rc.Write(func(fd uintptr) bool {
		err = unix.Sendto(int(fd), b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
		return err != unix.EAGAIN && err != unix.EINTR
	})
	if cerr != nil {
		return cerr
	}
	return os.NewSyscallError("sendto", err)
}

func (s *socket) Receive() ([]byte, error) {
	for {
		// Peek with MSG_TRUNC for the datagram's full size, so that
		// one too large for the buffer grows it instead of being cut.
		n, _, err := s.recvfrom(unix.MSG_PEEK | unix.MSG_TRUNC)
		if err != nil {
			return nil, err
		}
		if n > len(s.buf) {
			s.buf = make([]byte, n)
		}
		n, from, err := s.recvfrom(0)
		if err != nil {
			return nil, err
		}
		// Only the kernel (port 0) answers requests; another process
		// could still send to our port.
		if sa, ok := from.(*unix.SockaddrNetlink); ok && sa.Pid != 0 {
			continue
		}
		return append([]byte(nil), s.buf[:n]...), nil
	}
}

func (s *socket) recvfrom(flags int) (int, unix.Sockaddr, error) {
	var (
		n    int
		from unix.Sockaddr
		err  error
	)
	cerr := s.rc.Read(func(fd uintptr) bool {
		n, from, err = unix.Recvfrom(int(fd), s.buf, flags)
		return err != unix.EAGAIN && err != unix.EINTR
	})
	if cerr != nil {
		return 0, nil, cerr
	}
	if err != nil {
		return 0, nil, os.NewSyscallError("recvfrom", err)
	}
	return n, from, nil
}

func (s *socket) Close() error { return s.f.Close() }

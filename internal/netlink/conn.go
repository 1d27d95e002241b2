//go:build linux

// Package netlink is a small netlink client: requests go out, replies come
// back, and attributes are encoded and decoded without reflection.
//
// A Conn speaks to the kernel through a Socket. Dial opens an AF_NETLINK
// socket; package nltest supplies a fake kernel so that protocol code is
// tested on any host.
package netlink

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// ErrDumpInterrupted is returned for a dump during which the dumped objects
// changed, so that its parts may not agree (NLM_F_DUMP_INTR). Retrying
// the request usually succeeds.
var ErrDumpInterrupted = errors.New("netlink: dump interrupted by a concurrent change")

// Socket carries datagrams between a Conn and the kernel.
type Socket interface {
	// Send sends one datagram holding a request.
	Send(b []byte) error
	// Receive returns the next datagram from the kernel. It may hold
	// several messages. The Conn keeps the slice, so the Socket must not
	// reuse it.
	Receive() ([]byte, error)
	// Close releases the socket. It is called once.
	Close() error
}

// Conn sends netlink requests and collects their replies. Its methods are
// safe for concurrent use; requests take turns.
type Conn struct {
	sock Socket
	pid  uint32 // the port ID the kernel addresses replies to

	mu  sync.Mutex
	seq uint32

	closeOnce sync.Once
}

// NewConn returns a Conn over s, whose replies the kernel addresses to
// port pid.
func NewConn(s Socket, pid uint32) *Conn { return &Conn{sock: s, pid: pid} }

// Dial opens a netlink socket of the given protocol family, such as
// unix.NETLINK_ROUTE or unix.NETLINK_RDMA.
func Dial(family int) (*Conn, error) {
	s, pid, err := dial(family)
	if err != nil {
		return nil, err
	}
	return NewConn(s, pid), nil
}

// Close closes the socket. Later calls do nothing and return nil.
func (c *Conn) Close() error {
	var err error
	c.closeOnce.Do(func() { err = c.sock.Close() })
	return err
}

// Execute sends req and returns the kernel's replies, without the
// acknowledgement or the end-of-dump message. It sets NLM_F_REQUEST and the
// sequence number; unless req asks for a dump (NLM_F_DUMP) it
// also sets NLM_F_ACK, so that every request has a definite end. A
// refusal by the kernel is returned as an *Error, an inconsistent dump as
// ErrDumpInterrupted.
func (c *Conn) Execute(req Message) ([]Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()

	c.seq++
	req.Header.Seq = c.seq
	req.Header.Pid = 0
	req.Header.Flags |= unix.NLM_F_REQUEST
	dump := req.Header.Flags&unix.NLM_F_DUMP == unix.NLM_F_DUMP
	if !dump {
		req.Header.Flags |= unix.NLM_F_ACK
	}
	b, err := req.MarshalBinary()
	if err != nil {
		return nil, err
	}
	if err := c.sock.Send(b); err != nil {
		return nil, fmt.Errorf("netlink: send: %w", err)
	}
	return c.receive(dump)
}

// receive collects the replies to the current request up to its end: the
// acknowledgement or refusal, or for a dump NLMSG_DONE.
func (c *Conn) receive(dump bool) ([]Message, error) {
	var (
		replies     []Message
		interrupted bool
	)
	for {
		b, err := c.sock.Receive()
		if err != nil {
			return nil, fmt.Errorf("netlink: receive: %w", err)
		}
		msgs, err := ParseMessages(b)
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			if stale, err := c.check(m); err != nil {
				return nil, err
			} else if stale {
				continue
			}
			switch m.Header.Type {
			case unix.NLMSG_NOOP:
			case unix.NLMSG_ERROR:
				if err := parseError(m); err != nil {
					return nil, err
				}
				if interrupted {
					// Parts flagged inconsistent, then an acknowledgement
					// in place of NLMSG_DONE: the parts still disagree.
					return nil, ErrDumpInterrupted
				}
				return replies, nil
			case unix.NLMSG_DONE:
				if err := parseDone(m); err != nil {
					return nil, err
				}
				if !dump {
					// A multipart answer to a request that
					// is not a dump; the acknowledgement follows.
					continue
				}
				if interrupted || m.Header.Flags&unix.NLM_F_DUMP_INTR != 0 {
					return nil, ErrDumpInterrupted
				}
				return replies, nil
			case unix.NLMSG_OVERRUN:
				return nil, errors.New("netlink: the kernel reports lost data (NLMSG_OVERRUN)")
			default:
				interrupted = interrupted || m.Header.Flags&unix.NLM_F_DUMP_INTR != 0
				replies = append(replies, m)
			}
		}
	}
}

// check tells whether m answers the current request. Replies to an earlier
// request, left over when it failed halfway, are stale and skipped; any
// other mismatch is an error.
func (c *Conn) check(m Message) (stale bool, err error) {
	if m.Header.Pid != c.pid {
		return false, fmt.Errorf("netlink: reply for port %d, want %d", m.Header.Pid, c.pid)
	}
	if d := int32(c.seq - m.Header.Seq); d > 0 {
		return true, nil
	} else if d < 0 {
		return false, fmt.Errorf("netlink: reply with sequence %d, want %d", m.Header.Seq, c.seq)
	}
	return false, nil
}

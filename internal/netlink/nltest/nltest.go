//go:build linux

// Package nltest is a fake kernel for testing netlink clients on any host.
//
// A Func answers each request; the fake adds what the kernel adds around
// the answer: sequence numbers and port IDs, NLM_F_MULTI and NLMSG_DONE for
// dumps, acknowledgements, and NLMSG_ERROR with an extended ack for errors.
package nltest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/netlink"
)

// PID is the port ID of a Conn that Dial returns.
const PID = 0x4e4c

// Func answers one request with the replies the kernel would send. An error
// that is a unix.Errno or a *netlink.Error becomes the kernel's error
// message; any other error is returned by the Conn's next receive, as a
// broken socket would.
type Func func(req netlink.Message) ([]netlink.Message, error)

// Dial returns a Conn whose requests fn answers.
func Dial(fn Func) *netlink.Conn {
	return netlink.NewConn(&socket{fn: fn}, PID)
}

// socket queues the datagrams that fn's answers become.
type socket struct {
	fn     Func
	queue  [][]byte
	err    error
	closed atomic.Bool // Close may run concurrently with a request
}

func (s *socket) Send(b []byte) error {
	if s.closed.Load() {
		return os.ErrClosed
	}
	reqs, err := netlink.ParseMessages(b)
	if err != nil {
		return err
	}
	for _, req := range reqs {
		replies, fnErr := s.fn(req)
		if err := s.answer(req, replies, fnErr); err != nil {
			return err
		}
	}
	return nil
}

// Receive returns the next queued datagram. Where the kernel would leave
// the caller waiting forever, it fails.
func (s *socket) Receive() ([]byte, error) {
	switch {
	case s.closed.Load():
		return nil, os.ErrClosed
	case len(s.queue) > 0:
		b := s.queue[0]
		s.queue = s.queue[1:]
		return b, nil
	case s.err != nil:
		err := s.err
		s.err = nil
		return nil, err
	default:
		return nil, errors.New("nltest: no reply pending; the kernel would block")
	}
}

func (s *socket) Close() error {
	s.closed.Store(true)
	return nil
}

// answer queues the kernel's side of one exchange. Like the kernel, it
// sends a dump's replies and its end in one datagram and everything else
// in datagrams of their own.
func (s *socket) answer(req netlink.Message, replies []netlink.Message, fnErr error) error {
	var nlErr *netlink.Error
	var errno unix.Errno
	switch {
	case fnErr == nil:
	case errors.As(fnErr, &nlErr):
	case errors.As(fnErr, &errno):
		nlErr = &netlink.Error{Errno: errno}
	default:
		s.err = fnErr
		return nil
	}

	dump := req.Header.Flags&unix.NLM_F_DUMP == unix.NLM_F_DUMP
	var (
		dgram []byte
		err   error
	)
	for _, r := range replies {
		if r.Header.Seq == 0 {
			r.Header.Seq = req.Header.Seq
		}
		if r.Header.Pid == 0 {
			r.Header.Pid = PID
		}
		if dump {
			r.Header.Flags |= unix.NLM_F_MULTI
		}
		if dgram, err = r.AppendBinary(dgram); err != nil {
			return err
		}
		if !dump {
			s.queue = append(s.queue, dgram)
			dgram = nil
		}
	}

	var end netlink.Message
	switch {
	case dump && nlErr != nil && len(replies) > 0:
		// A dump that fails midway reports it in NLMSG_DONE.
		end, err = done(req, nlErr)
	case nlErr != nil:
		end, err = errorMessage(req, nlErr)
	case dump:
		end, err = done(req, nil)
	case req.Header.Flags&unix.NLM_F_ACK != 0:
		end, err = errorMessage(req, nil)
	default:
		return nil
	}
	if err == nil {
		dgram, err = end.AppendBinary(dgram)
	}
	if err != nil {
		return err
	}
	s.queue = append(s.queue, dgram)
	return nil
}

// errorMessage is the kernel's NLMSG_ERROR for req: an acknowledgement
// when e is nil. The request is echoed capped, as NETLINK_CAP_ACK asks.
func errorMessage(req netlink.Message, e *netlink.Error) (netlink.Message, error) {
	m := reply(req, unix.NLMSG_ERROR, unix.NLM_F_CAPPED)
	m.Data = binary.NativeEndian.AppendUint32(nil, uint32(code(e)))
	m.Data = binary.NativeEndian.AppendUint32(m.Data, req.Header.Len)
	m.Data = binary.NativeEndian.AppendUint16(m.Data, req.Header.Type)
	m.Data = binary.NativeEndian.AppendUint16(m.Data, req.Header.Flags)
	m.Data = binary.NativeEndian.AppendUint32(m.Data, req.Header.Seq)
	m.Data = binary.NativeEndian.AppendUint32(m.Data, req.Header.Pid)
	return extAck(m, e)
}

// done is the NLMSG_DONE that ends a dump, with e's code if it failed.
func done(req netlink.Message, e *netlink.Error) (netlink.Message, error) {
	m := reply(req, unix.NLMSG_DONE, unix.NLM_F_MULTI)
	m.Data = binary.NativeEndian.AppendUint32(nil, uint32(code(e)))
	return extAck(m, e)
}

func reply(req netlink.Message, typ, flags uint16) netlink.Message {
	return netlink.Message{Header: unix.NlMsghdr{Type: typ, Flags: flags, Seq: req.Header.Seq, Pid: PID}}
}

// code is the negated errno the kernel puts in error messages.
func code(e *netlink.Error) int32 {
	if e == nil {
		return 0
	}
	return -int32(e.Errno)
}

// extAck appends e's message as an extended ack attribute.
func extAck(m netlink.Message, e *netlink.Error) (netlink.Message, error) {
	if e == nil || e.Message == "" {
		return m, nil
	}
	ae := netlink.NewAttributeEncoder()
	ae.String(unix.NLMSGERR_ATTR_MSG, e.Message)
	b, err := ae.Encode()
	if err != nil {
		return m, fmt.Errorf("nltest: extended ack: %w", err)
	}
	m.Header.Flags |= unix.NLM_F_ACK_TLVS
	m.Data = append(m.Data, b...)
	return m, nil
}

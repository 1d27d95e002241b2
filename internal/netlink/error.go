//go:build linux

package netlink

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// Error is the kernel's refusal of a request: an NLMSG_ERROR with a
// nonzero code, or a dump that ended with one. It wraps the errno, so
// errors.Is(err, unix.EEXIST) matches it.
type Error struct {
	Errno unix.Errno
	// Message is the kernel's explanation from the extended ack
	// (NLMSGERR_ATTR_MSG), or "" when it gave none.
	Message string
}

// Error returns the errno's text, followed by the kernel's message if any.
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Errno.Error()
	}
	return e.Errno.Error() + ": " + e.Message
}

// Unwrap returns the errno.
func (e *Error) Unwrap() error { return e.Errno }

// parseError decodes the payload of an NLMSG_ERROR (struct nlmsgerr): the
// negated errno, the request's header, unless NLM_F_CAPPED the rest of the
// request, then with NLM_F_ACK_TLVS the extended ack attributes. It
// returns nil for an acknowledgement.
func parseError(m Message) error {
	code, err := errorCode(m)
	if err != nil || code == 0 {
		return err
	}
	// The attributes start after the echoed request, padded.
	off := 4 + unix.SizeofNlMsghdr
	if m.Header.Flags&unix.NLM_F_CAPPED == 0 && len(m.Data) >= off {
		off = 4 + align(int(binary.NativeEndian.Uint32(m.Data[4:])))
	}
	return newError(m, code, off)
}

// parseDone decodes the payload of an NLMSG_DONE: the dump's result code,
// then with NLM_F_ACK_TLVS the extended ack attributes. Old kernels send
// no payload at all.
func parseDone(m Message) error {
	if len(m.Data) == 0 {
		return nil
	}
	code, err := errorCode(m)
	if err != nil || code == 0 {
		return err
	}
	return newError(m, code, 4)
}

func errorCode(m Message) (int32, error) {
	if len(m.Data) < 4 {
		return 0, fmt.Errorf("netlink: message type %d: %d bytes too short for an error code", m.Header.Type, len(m.Data))
	}
	return int32(binary.NativeEndian.Uint32(m.Data)), nil
}

// newError builds the Error for code, with the extended ack attributes
// that start at off in m's payload.
func newError(m Message, code int32, off int) *Error {
	e := &Error{Errno: unix.Errno(-code)}
	if code > 0 {
		// Not a negated errno; keep the number visible rather than invert it.
		e.Errno = unix.Errno(code)
	}
	if m.Header.Flags&unix.NLM_F_ACK_TLVS == 0 || off > len(m.Data) {
		return e
	}
	d := NewAttributeDecoder(m.Data[off:])
	for d.Next() {
		if d.Type() == unix.NLMSGERR_ATTR_MSG {
			e.Message = d.String()
		}
	}
	// A malformed extended ack costs only the message.
	return e
}

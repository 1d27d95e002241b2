//go:build linux

package netlink

import (
	"encoding/binary"
	"fmt"
	"math"

	"golang.org/x/sys/unix"
)

// Message is one netlink message: a header and the payload after it.
type Message struct {
	// Header is the nlmsghdr. MarshalBinary computes Len itself;
	// ParseMessages sets it as received.
	Header unix.NlMsghdr
	// Data is the payload without the trailing padding.
	Data []byte
}

// AppendBinary appends m, padded to the netlink alignment, to b.
func (m Message) AppendBinary(b []byte) ([]byte, error) {
	n := unix.SizeofNlMsghdr + len(m.Data)
	if n > math.MaxUint32 {
		return nil, fmt.Errorf("netlink: message of %d bytes is too long", n)
	}
	b = binary.NativeEndian.AppendUint32(b, uint32(n))
	b = binary.NativeEndian.AppendUint16(b, m.Header.Type)
	b = binary.NativeEndian.AppendUint16(b, m.Header.Flags)
	b = binary.NativeEndian.AppendUint32(b, m.Header.Seq)
	b = binary.NativeEndian.AppendUint32(b, m.Header.Pid)
	b = append(b, m.Data...)
	return append(b, make([]byte, align(n)-n)...), nil
}

// MarshalBinary returns m as it goes on the wire.
func (m Message) MarshalBinary() ([]byte, error) { return m.AppendBinary(nil) }

// ParseMessages splits a datagram into its messages. The payloads alias b.
func ParseMessages(b []byte) ([]Message, error) {
	var msgs []Message
	for len(b) > 0 {
		if len(b) < unix.SizeofNlMsghdr {
			return nil, fmt.Errorf("netlink: %d trailing bytes are too short for a message header", len(b))
		}
		h := unix.NlMsghdr{
			Len:   binary.NativeEndian.Uint32(b[0:]),
			Type:  binary.NativeEndian.Uint16(b[4:]),
			Flags: binary.NativeEndian.Uint16(b[6:]),
			Seq:   binary.NativeEndian.Uint32(b[8:]),
			Pid:   binary.NativeEndian.Uint32(b[12:]),
		}
		if h.Len < unix.SizeofNlMsghdr || uint64(h.Len) > uint64(len(b)) {
			return nil, fmt.Errorf("netlink: message length %d, %d bytes left", h.Len, len(b))
		}
		n := int(h.Len)
		msgs = append(msgs, Message{Header: h, Data: b[unix.SizeofNlMsghdr:n:n]})
		b = b[min(align(n), len(b)):]
	}
	return msgs, nil
}

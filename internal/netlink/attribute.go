//go:build linux

package netlink

import (
	"encoding/binary"
	"fmt"
	"math"

	"golang.org/x/sys/unix"
)

// typeMask clears the flag bits that share an attribute's type field.
const typeMask = ^uint16(unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)

// align rounds n up to the 4-byte boundary that both messages
// (NLMSG_ALIGN) and attributes (NLA_ALIGN) use.
func align(n int) int {
	return (n + unix.NLA_ALIGNTO - 1) &^ (unix.NLA_ALIGNTO - 1)
}

// byteOrder both reads and appends, so that encoder and decoder pick the
// order of an attribute in one place.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// orderOf is the byte order of an attribute's integer: the host's, unless
// the type carries NLA_F_NET_BYTEORDER.
func orderOf(typ uint16) byteOrder {
	if typ&unix.NLA_F_NET_BYTEORDER != 0 {
		return binary.BigEndian
	}
	return binary.NativeEndian
}

// An AttributeEncoder appends netlink attributes (struct nlattr) to a
// buffer. Integers are in host byte order unless the type has
// NLA_F_NET_BYTEORDER set. The first error, an attribute too long for its
// 16-bit length, sticks and Encode returns it.
type AttributeEncoder struct {
	b   []byte
	err error
}

// NewAttributeEncoder returns an empty encoder.
func NewAttributeEncoder() *AttributeEncoder { return &AttributeEncoder{} }

// Uint8 appends a one-byte attribute.
func (e *AttributeEncoder) Uint8(typ uint16, v uint8) { e.Bytes(typ, []byte{v}) }

// Uint16 appends a two-byte attribute.
func (e *AttributeEncoder) Uint16(typ uint16, v uint16) {
	e.Bytes(typ, orderOf(typ).AppendUint16(nil, v))
}

// Uint32 appends a four-byte attribute.
func (e *AttributeEncoder) Uint32(typ uint16, v uint32) {
	e.Bytes(typ, orderOf(typ).AppendUint32(nil, v))
}

// Uint64 appends an eight-byte attribute.
func (e *AttributeEncoder) Uint64(typ uint16, v uint64) {
	e.Bytes(typ, orderOf(typ).AppendUint64(nil, v))
}

// String appends s with the terminating NUL that the kernel's
// NLA_NUL_STRING policy requires and NLA_STRING accepts.
func (e *AttributeEncoder) String(typ uint16, s string) {
	start := e.begin(typ)
	e.b = append(e.b, s...)
	e.b = append(e.b, 0)
	e.end(start)
}

// Bytes appends an attribute whose payload is b.
func (e *AttributeEncoder) Bytes(typ uint16, b []byte) {
	start := e.begin(typ)
	e.b = append(e.b, b...)
	e.end(start)
}

// Flag appends an attribute with no payload (NLA_FLAG).
func (e *AttributeEncoder) Flag(typ uint16) { e.end(e.begin(typ)) }

// Nested appends an attribute that holds the attributes fn appends to the
// encoder it is given. NLA_F_NESTED is set, as strict kernel policies
// require and lenient ones ignore. An error from fn sticks like any other.
func (e *AttributeEncoder) Nested(typ uint16, fn func(*AttributeEncoder) error) {
	start := e.begin(typ | unix.NLA_F_NESTED)
	if err := fn(e); err != nil && e.err == nil {
		e.err = err
	}
	e.end(start)
}

// Encode returns the attributes appended so far, or the first error.
func (e *AttributeEncoder) Encode() ([]byte, error) {
	if e.err != nil {
		return nil, e.err
	}
	return e.b, nil
}

// begin appends an attribute header whose length end fills in.
func (e *AttributeEncoder) begin(typ uint16) int {
	start := len(e.b)
	e.b = binary.NativeEndian.AppendUint16(e.b, 0)
	e.b = binary.NativeEndian.AppendUint16(e.b, typ)
	return start
}

// end sets the length of the attribute that begins at start and pads it.
// The length excludes the padding, as NLA_HDRLEN+payload does in C.
func (e *AttributeEncoder) end(start int) {
	n := len(e.b) - start
	if n > math.MaxUint16 && e.err == nil {
		typ := binary.NativeEndian.Uint16(e.b[start+2:])
		e.err = fmt.Errorf("netlink: attribute %d: %d bytes do not fit in a 16-bit length", typ&typeMask, n)
	}
	binary.NativeEndian.PutUint16(e.b[start:], uint16(n))
	e.b = append(e.b, make([]byte, align(n)-n)...)
}

// An AttributeDecoder walks a buffer of netlink attributes. Next moves to
// the next attribute; the getters read the current one. The first error,
// malformed input or a payload of the wrong size for its getter, sticks:
// Next then returns false, getters return zero values, and Err reports it.
// Input is never trusted, so no input makes the decoder panic.
type AttributeDecoder struct {
	b    []byte // not yet decoded
	typ  uint16 // of the current attribute, with flags
	data []byte // payload of the current attribute
	err  error
}

// NewAttributeDecoder returns a decoder over b. It does not copy b.
func NewAttributeDecoder(b []byte) *AttributeDecoder { return &AttributeDecoder{b: b} }

// Next advances to the next attribute and reports whether there is one.
func (d *AttributeDecoder) Next() bool {
	if d.err != nil || len(d.b) == 0 {
		return false
	}
	if len(d.b) < unix.SizeofNlAttr {
		d.err = fmt.Errorf("netlink: %d trailing bytes are too short for an attribute header", len(d.b))
		return false
	}
	n := int(binary.NativeEndian.Uint16(d.b))
	if n < unix.SizeofNlAttr || n > len(d.b) {
		d.err = fmt.Errorf("netlink: attribute length %d, %d bytes left", n, len(d.b))
		return false
	}
	d.typ = binary.NativeEndian.Uint16(d.b[2:])
	d.data = d.b[unix.SizeofNlAttr:n:n]
	// The last attribute may come without its padding.
	d.b = d.b[min(align(n), len(d.b)):]
	return true
}

// Type is the current attribute's type without the flag bits.
func (d *AttributeDecoder) Type() uint16 { return d.typ & typeMask }

// TypeFlags is the flag bits of the current attribute's type
// (NLA_F_NESTED, NLA_F_NET_BYTEORDER).
func (d *AttributeDecoder) TypeFlags() uint16 { return d.typ &^ typeMask }

// Len is the length of the current attribute's payload.
func (d *AttributeDecoder) Len() int { return len(d.data) }

// Bytes returns a copy of the current attribute's payload.
func (d *AttributeDecoder) Bytes() []byte {
	if d.err != nil {
		return nil
	}
	return append([]byte(nil), d.data...)
}

// String returns the current attribute's payload up to its first NUL,
// which is where the kernel's strings end.
func (d *AttributeDecoder) String() string {
	if d.err != nil {
		return ""
	}
	for i, c := range d.data {
		if c == 0 {
			return string(d.data[:i])
		}
	}
	return string(d.data)
}

// Uint8 reads a one-byte payload.
func (d *AttributeDecoder) Uint8() uint8 {
	if !d.want(1) {
		return 0
	}
	return d.data[0]
}

// Uint16 reads a two-byte payload.
func (d *AttributeDecoder) Uint16() uint16 {
	if !d.want(2) {
		return 0
	}
	return orderOf(d.typ).Uint16(d.data)
}

// Uint32 reads a four-byte payload.
func (d *AttributeDecoder) Uint32() uint32 {
	if !d.want(4) {
		return 0
	}
	return orderOf(d.typ).Uint32(d.data)
}

// Uint64 reads an eight-byte payload.
func (d *AttributeDecoder) Uint64() uint64 {
	if !d.want(8) {
		return 0
	}
	return orderOf(d.typ).Uint64(d.data)
}

// Nested decodes the current attribute's payload as attributes with fn.
// An error from fn, or from the inner decoder, sticks in d.
func (d *AttributeDecoder) Nested(fn func(*AttributeDecoder) error) {
	if d.err != nil {
		return
	}
	nd := NewAttributeDecoder(d.data)
	err := fn(nd)
	if err == nil {
		err = nd.err
	}
	if err != nil {
		d.err = err
	}
}

// Err returns the first error the decoder met, if any.
func (d *AttributeDecoder) Err() error { return d.err }

// want checks that the payload is n bytes long and records an error if not.
func (d *AttributeDecoder) want(n int) bool {
	if d.err != nil {
		return false
	}
	if len(d.data) != n {
		d.err = fmt.Errorf("netlink: attribute %d: %d bytes, want %d", d.Type(), len(d.data), n)
		return false
	}
	return true
}

//go:build linux

package netlink

import (
	"testing"

	"golang.org/x/sys/unix"
)

// FuzzAttributeDecoder walks arbitrary bytes as attributes, nested ones
// too, and calls every getter. It must never panic, and a walk that ends
// without an error must have consumed well-formed input.
func FuzzAttributeDecoder(f *testing.F) {
	e := NewAttributeEncoder()
	e.Uint32(1, 7)
	e.String(2, "rxe0")
	e.Uint64(6, 0x5054_00ff_fe12_3456)
	e.Nested(3, func(e *AttributeEncoder) error {
		e.Uint8(1, 1)
		e.Uint16(2|unix.NLA_F_NET_BYTEORDER, 0x1234)
		return nil
	})
	good, err := e.Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte{})
	f.Add([]byte{4, 0, 1, 0})
	f.Add([]byte{0xff, 0xff, 1, 0x80, 0})
	f.Add(good[:len(good)-5])

	f.Fuzz(func(t *testing.T, b []byte) {
		walk(NewAttributeDecoder(b), 0)
		if msgs, err := ParseMessages(b); err == nil {
			// Messages that parse also re-encode.
			for _, m := range msgs {
				if _, err := m.MarshalBinary(); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

func walk(d *AttributeDecoder, depth int) {
	for d.Next() {
		_ = d.Type()
		_ = d.TypeFlags()
		_ = d.Len()
		_ = d.Bytes()
		_ = d.String()
		if d.TypeFlags()&unix.NLA_F_NESTED != 0 && depth < 8 {
			d.Nested(func(nd *AttributeDecoder) error {
				walk(nd, depth+1)
				return nil
			})
			continue
		}
		switch d.Len() {
		case 1:
			_ = d.Uint8()
		case 2:
			_ = d.Uint16()
		case 4:
			_ = d.Uint32()
		case 8:
			_ = d.Uint64()
		default:
			_ = d.Uint32() // wrong size: must fail, not panic
		}
	}
	_ = d.Err()
}

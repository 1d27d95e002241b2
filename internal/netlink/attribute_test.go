//go:build linux

package netlink

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// skipBigEndian skips tests whose expected bytes are written out for a
// little-endian host, as amd64 and arm64 are.
func skipBigEndian(t *testing.T) {
	t.Helper()
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("expected bytes are little-endian")
	}
}

func TestAttributeEncoder(t *testing.T) {
	skipBigEndian(t)
	for _, tt := range []struct {
		name string
		enc  func(e *AttributeEncoder)
		want []byte
	}{
		{"empty", func(e *AttributeEncoder) {}, nil},
		{"u8", func(e *AttributeEncoder) { e.Uint8(1, 0xab) },
			[]byte{5, 0, 1, 0, 0xab, 0, 0, 0}},
		{"u16", func(e *AttributeEncoder) { e.Uint16(2, 0x1234) },
			[]byte{6, 0, 2, 0, 0x34, 0x12, 0, 0}},
		{"u16 network order", func(e *AttributeEncoder) { e.Uint16(2|unix.NLA_F_NET_BYTEORDER, 0x1234) },
			[]byte{6, 0, 2, 0x40, 0x12, 0x34, 0, 0}},
		{"u32", func(e *AttributeEncoder) { e.Uint32(3, 0x01020304) },
			[]byte{8, 0, 3, 0, 4, 3, 2, 1}},
		{"u64", func(e *AttributeEncoder) { e.Uint64(4, 0x0102030405060708) },
			[]byte{12, 0, 4, 0, 8, 7, 6, 5, 4, 3, 2, 1}},
		{"string gets its NUL", func(e *AttributeEncoder) { e.String(5, "rxe") },
			[]byte{8, 0, 5, 0, 'r', 'x', 'e', 0}},
		{"string padded", func(e *AttributeEncoder) { e.String(5, "rxe0") },
			[]byte{9, 0, 5, 0, 'r', 'x', 'e', '0', 0, 0, 0, 0}},
		{"empty string", func(e *AttributeEncoder) { e.String(5, "") },
			[]byte{5, 0, 5, 0, 0, 0, 0, 0}},
		{"bytes", func(e *AttributeEncoder) { e.Bytes(6, []byte{1, 2}) },
			[]byte{6, 0, 6, 0, 1, 2, 0, 0}},
		{"flag", func(e *AttributeEncoder) { e.Flag(7) },
			[]byte{4, 0, 7, 0}},
		{"nested", func(e *AttributeEncoder) {
			e.Nested(8, func(e *AttributeEncoder) error {
				e.Uint8(1, 1)
				e.Nested(2, func(e *AttributeEncoder) error {
					e.Uint32(3, 3)
					return nil
				})
				return nil
			})
			e.Uint8(9, 9)
		}, []byte{
			24, 0, 8, 0x80,
			5, 0, 1, 0, 1, 0, 0, 0,
			12, 0, 2, 0x80,
			8, 0, 3, 0, 3, 0, 0, 0,
			5, 0, 9, 0, 9, 0, 0, 0,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := NewAttributeEncoder()
			tt.enc(e)
			got, err := e.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("encoding (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAttributeEncoderTooLong(t *testing.T) {
	e := NewAttributeEncoder()
	e.Bytes(1, make([]byte, 1<<16))
	e.Uint8(2, 2)
	if _, err := e.Encode(); err == nil {
		t.Fatal("Encode of a 64 KiB attribute succeeded")
	}
}

func TestAttributeEncoderNestedError(t *testing.T) {
	e := NewAttributeEncoder()
	e.Nested(1, func(*AttributeEncoder) error { return unix.EINVAL })
	if _, err := e.Encode(); err != unix.EINVAL {
		t.Fatalf("Encode error = %v, want the one from the nested func", err)
	}
}

// TestAttributeRoundTrip encodes one value of each kind and reads it back
// with the matching getter.
func TestAttributeRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		name string
		typ  uint16
		enc  func(e *AttributeEncoder, typ uint16)
		dec  func(d *AttributeDecoder) any
		want any
	}{
		{"u8", 1,
			func(e *AttributeEncoder, typ uint16) { e.Uint8(typ, 0xfe) },
			func(d *AttributeDecoder) any { return d.Uint8() }, uint8(0xfe)},
		{"u16", 2,
			func(e *AttributeEncoder, typ uint16) { e.Uint16(typ, 0xfedc) },
			func(d *AttributeDecoder) any { return d.Uint16() }, uint16(0xfedc)},
		{"u16 network order", 2 | unix.NLA_F_NET_BYTEORDER,
			func(e *AttributeEncoder, typ uint16) { e.Uint16(typ, 0xfedc) },
			func(d *AttributeDecoder) any { return d.Uint16() }, uint16(0xfedc)},
		{"u32", 3,
			func(e *AttributeEncoder, typ uint16) { e.Uint32(typ, 0xfedcba98) },
			func(d *AttributeDecoder) any { return d.Uint32() }, uint32(0xfedcba98)},
		{"u32 network order", 3 | unix.NLA_F_NET_BYTEORDER,
			func(e *AttributeEncoder, typ uint16) { e.Uint32(typ, 0xc0a84d01) },
			func(d *AttributeDecoder) any { return d.Uint32() }, uint32(0xc0a84d01)},
		{"u64", 4,
			func(e *AttributeEncoder, typ uint16) { e.Uint64(typ, 0x5054_00ff_fe12_3456) },
			func(d *AttributeDecoder) any { return d.Uint64() }, uint64(0x5054_00ff_fe12_3456)},
		{"u64 network order", 4 | unix.NLA_F_NET_BYTEORDER,
			func(e *AttributeEncoder, typ uint16) { e.Uint64(typ, 1<<63|1) },
			func(d *AttributeDecoder) any { return d.Uint64() }, uint64(1<<63 | 1)},
		{"string", 5,
			func(e *AttributeEncoder, typ uint16) { e.String(typ, "uverbs0") },
			func(d *AttributeDecoder) any { return d.String() }, "uverbs0"},
		{"long string", 5,
			func(e *AttributeEncoder, typ uint16) { e.String(typ, strings.Repeat("x", 1000)) },
			func(d *AttributeDecoder) any { return d.String() }, strings.Repeat("x", 1000)},
		{"bytes", 6,
			func(e *AttributeEncoder, typ uint16) { e.Bytes(typ, []byte{0, 1, 2, 3, 4}) },
			func(d *AttributeDecoder) any { return d.Bytes() }, []byte{0, 1, 2, 3, 4}},
		{"flag", 7,
			func(e *AttributeEncoder, typ uint16) { e.Flag(typ) },
			func(d *AttributeDecoder) any { return d.Len() }, 0},
		{"nested", 8,
			func(e *AttributeEncoder, typ uint16) {
				e.Nested(typ, func(e *AttributeEncoder) error {
					e.String(1, "veth0")
					e.Uint32(2, 7)
					return nil
				})
			},
			func(d *AttributeDecoder) any {
				var got []string
				d.Nested(func(d *AttributeDecoder) error {
					for d.Next() {
						switch d.Type() {
						case 1:
							got = append(got, d.String())
						case 2:
							got = append(got, string(rune('0'+d.Uint32())))
						}
					}
					return nil
				})
				return got
			}, []string{"veth0", "7"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := NewAttributeEncoder()
			e.Uint8(100, 1) // something before, to test walking past it
			tt.enc(e, tt.typ)
			e.Uint8(101, 2) // and after, to test alignment
			b, err := e.Encode()
			if err != nil {
				t.Fatal(err)
			}

			d := NewAttributeDecoder(b)
			var got any
			var types []uint16
			for d.Next() {
				types = append(types, d.Type())
				if d.Type() == tt.typ&typeMask {
					if d.TypeFlags() != tt.typ&^typeMask && tt.name != "nested" {
						t.Errorf("TypeFlags = %#x, want %#x", d.TypeFlags(), tt.typ&^typeMask)
					}
					got = tt.dec(d)
				}
			}
			if err := d.Err(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]uint16{100, tt.typ & typeMask, 101}, types); diff != "" {
				t.Errorf("attribute types (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAttributeDecoderStringStopsAtNUL(t *testing.T) {
	d := NewAttributeDecoder([]byte{10, 0, 1, 0, 'a', 'b', 0, 'c', 0, 0, 0, 0})
	if !d.Next() {
		t.Fatal(d.Err())
	}
	if got := d.String(); got != "ab" {
		t.Errorf("String = %q, want %q", got, "ab")
	}
}

func TestAttributeDecoderLastPaddingMissing(t *testing.T) {
	d := NewAttributeDecoder([]byte{5, 0, 1, 0, 7})
	if !d.Next() || d.Uint8() != 7 || d.Next() || d.Err() != nil {
		t.Fatalf("attribute without trailing padding not decoded: err %v", d.Err())
	}
}

// TestAttributeDecoderMalformed feeds broken input: each must end the walk
// with an error, and no getter may panic.
func TestAttributeDecoderMalformed(t *testing.T) {
	skipBigEndian(t)
	for _, tt := range []struct {
		name string
		b    []byte
		get  func(d *AttributeDecoder)
	}{
		{"truncated header", []byte{8, 0}, nil},
		{"trailing bytes", []byte{5, 0, 1, 0, 1, 0, 0, 0, 1}, nil},
		{"length below header", []byte{3, 0, 1, 0}, nil},
		{"length zero", []byte{0, 0, 1, 0, 0, 0, 0, 0}, nil},
		{"length past end", []byte{12, 0, 1, 0, 1, 2, 3, 4}, nil},
		{"length past end later", []byte{5, 0, 1, 0, 1, 0, 0, 0, 0xff, 0xff, 2, 0}, nil},
		{"u8 of two bytes", []byte{6, 0, 1, 0, 1, 2, 0, 0}, func(d *AttributeDecoder) { d.Uint8() }},
		{"u16 of one byte", []byte{5, 0, 1, 0, 1, 0, 0, 0}, func(d *AttributeDecoder) { d.Uint16() }},
		{"u32 of two bytes", []byte{6, 0, 1, 0, 1, 2, 0, 0}, func(d *AttributeDecoder) { d.Uint32() }},
		{"u64 of four bytes", []byte{8, 0, 1, 0, 1, 2, 3, 4}, func(d *AttributeDecoder) { d.Uint64() }},
		{"u32 of nothing", []byte{4, 0, 1, 0}, func(d *AttributeDecoder) { d.Uint32() }},
		{"nested truncated", []byte{8, 0, 1, 0x80, 8, 0, 2, 0}, func(d *AttributeDecoder) {
			d.Nested(func(d *AttributeDecoder) error {
				for d.Next() {
				}
				return nil
			})
		}},
		{"nested wrong size", []byte{12, 0, 1, 0x80, 6, 0, 2, 0, 1, 2, 0, 0}, func(d *AttributeDecoder) {
			d.Nested(func(d *AttributeDecoder) error {
				for d.Next() {
					d.Uint32()
				}
				return nil
			})
		}},
		{"nested func fails", []byte{4, 0, 1, 0x80}, func(d *AttributeDecoder) {
			d.Nested(func(d *AttributeDecoder) error { return unix.EINVAL })
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := NewAttributeDecoder(tt.b)
			for d.Next() {
				if tt.get != nil {
					tt.get(d)
				}
			}
			if d.Err() == nil {
				t.Fatal("no error")
			}
			// The error sticks: nothing more is decoded.
			if d.Next() {
				t.Error("Next after an error returned true")
			}
			if d.Uint8() != 0 || d.Uint16() != 0 || d.Uint32() != 0 || d.Uint64() != 0 ||
				d.String() != "" || d.Bytes() != nil {
				t.Error("a getter after an error returned a value")
			}
		})
	}
}

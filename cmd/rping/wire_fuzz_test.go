package main

import (
	"bytes"
	"testing"
)

// FuzzDecodeInfo reads arbitrary bytes as the peer's buffer
// advertisement, the 16 bytes the receive buffer holds after a
// completion of infoSize bytes. Every field comes from the wire:
// encode(decode(b)) == b.
func FuzzDecodeInfo(f *testing.F) {
	for _, r := range []rdmaInfo{{buf: 0x7f12_3456_7000, rkey: 0x1234, size: 64}, {}, {buf: ^uint64(0), rkey: ^uint32(0), size: ^uint32(0)}} {
		b := make([]byte, infoSize)
		r.encode(b)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < infoSize {
			return // the receive buffer is always infoSize bytes
		}
		r := decodeInfo(b)
		out := make([]byte, infoSize)
		r.encode(out)
		if !bytes.Equal(out, b[:infoSize]) {
			t.Fatalf("encode(decode(% x)) = % x", b[:infoSize], out)
		}
	})
}

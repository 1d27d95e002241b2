package main

import "testing"

// FuzzDecodeDest reads arbitrary bytes as the peer's out-of-band message.
// A message that decodes is exactly the encoding of what it decoded to,
// the "all" flag counting as any nonzero byte.
func FuzzDecodeDest(f *testing.F) {
	f.Add(dest{test: 3, all: true, lid: 1, qpn: 0x11, psn: 0xabcdef, rkey: 0x1234, addr: 0x7f00_0000_1000, size: 65536, iters: 1000,
		gid: [16]byte{10: 0xff, 11: 0xff, 12: 192, 13: 168, 14: 77, 15: 1}}.encode())
	f.Add(dest{}.encode())
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeDest(b)
		if err != nil {
			if len(b) == msgSize && string(b[:4]) == magic {
				t.Fatalf("a well-formed message refused: %v", err)
			}
			return
		}
		want := append([]byte(nil), b...)
		if want[5] != 0 {
			want[5] = 1
		}
		if got := d.encode(); string(got) != string(want) {
			t.Fatalf("encode(decode(% x)) = % x", b, got)
		}
	})
}

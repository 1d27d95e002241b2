package rpma

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzRemoteMRFromDescriptor decodes what a peer sends as an MR
// descriptor. A descriptor that decodes re-encodes to its first 21 bytes,
// its flush type is part of its usage, and the range check of the posting
// methods never lets an access run past the region.
func FuzzRemoteMRFromDescriptor(f *testing.F) {
	f.Add(desc(0x7f00_dead_0000, 4096, 0x1234, byte(UsageReadSrc|UsageWriteDst|UsageFlushTypeVisibility)), 0, 8)
	f.Add(desc(1<<63, 1<<63|1, 1<<31, byte(UsageRecv), 9, 9), 64, 64)
	f.Add(desc(0, 0, 0, 0), 0, 0)
	f.Add(desc(^uint64(0), ^uint64(0), ^uint32(0), 0xff), -1, 1)
	f.Add([]byte{1, 2, 3}, 0, 0)
	f.Fuzz(func(t *testing.T, b []byte, off, n int) {
		in := bytes.Clone(b)
		r, err := RemoteMRFromDescriptor(b)
		if !bytes.Equal(in, b) {
			t.Fatalf("RemoteMRFromDescriptor changed its input")
		}
		if err != nil {
			if r != nil || !errors.Is(err, ErrInvalid) {
				t.Fatalf("RemoteMRFromDescriptor(% x) = %v, %v; want nil and ErrInvalid", b, r, err)
			}
			if len(b) >= DescriptorSize && b[20] != 0 {
				t.Fatalf("RemoteMRFromDescriptor refused a descriptor with usage %#x: %v", b[20], err)
			}
			return
		}
		if got := desc(r.addr, r.size, r.rkey, byte(r.usage)); !bytes.Equal(got, b[:DescriptorSize]) {
			t.Fatalf("re-encoded % x, want % x", got, b[:DescriptorSize])
		}
		if r.usage == 0 || r.Len() != r.size || r.FlushType()&^r.usage != 0 {
			t.Fatalf("usage %#x, flush type %#x, Len %d, size %d", r.usage, r.FlushType(), r.Len(), r.size)
		}
		addr, err := r.at(off, n)
		inside := off >= 0 && n >= 0 && uint64(off)+uint64(n) <= r.size
		if (err == nil) != inside {
			t.Fatalf("at(%d, %d) on %d bytes: error %v", off, n, r.size, err)
		}
		if err == nil && addr != r.addr+uint64(off) {
			t.Fatalf("at(%d, %d) = %#x, want %#x", off, n, addr, r.addr+uint64(off))
		}
	})
}

// FuzzPeerConfigFromDescriptor decodes what a peer sends as its peer
// config. A config that decodes encodes to one byte that decodes to it
// again, and that byte is 0 exactly when the peer's first byte is.
func FuzzPeerConfigFromDescriptor(f *testing.F) {
	for _, s := range [][]byte{nil, {0}, {1}, {0x80}, {1, 0, 0}, {0, 1}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := PeerConfigFromDescriptor(b)
		if err != nil {
			if len(b) >= PeerConfigDescriptorSize || !errors.Is(err, ErrInvalid) || c != (PeerConfig{}) {
				t.Fatalf("PeerConfigFromDescriptor(% x) = %+v, %v", b, c, err)
			}
			return
		}
		d := c.Descriptor()
		if len(d) != PeerConfigDescriptorSize || (d[0] == 0) != (b[0] == 0) {
			t.Fatalf("PeerConfigFromDescriptor(% x) re-encodes as % x", b, d)
		}
		if c2, err := PeerConfigFromDescriptor(d); err != nil || c2 != c {
			t.Fatalf("decode(encode(%+v)) = %+v, %v", c, c2, err)
		}
	})
}

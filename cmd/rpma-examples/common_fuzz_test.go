package main

import (
	"bytes"
	"testing"

	"github.com/purerdma/purerdma/rpma"
)

// FuzzDecodeCommonData reads arbitrary bytes as the struct common_data a
// peer sends as private data. When it decodes, it re-encodes to its first
// 28 bytes, and its descriptors, whatever they hold, are read from inside
// the struct and only with their declared sizes.
func FuzzDecodeCommonData(f *testing.F) {
	d := commonData{DataOffset: 64, MRDescSize: rpma.DescriptorSize, PcfgDescSize: rpma.PeerConfigDescriptorSize}
	copy(d.Descriptors[:], []byte{0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0x34, 0x12, 0, 0, 0x19, 1})
	f.Add(d.encode())
	f.Add(append(d.encode(), make([]byte, 28)...)) // padded, as over RoCE
	d.MRDescSize, d.PcfgDescSize = 24, 1
	f.Add(d.encode())
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeCommonData(b)
		if err != nil {
			return
		}
		if got := d.encode(); !bytes.Equal(got, b[:commonDataSize]) {
			t.Fatalf("encode(decode(% x)) = % x", b[:commonDataSize], got)
		}
		if _, err := d.remoteMR(); err == nil && d.MRDescSize < rpma.DescriptorSize {
			t.Fatalf("a remote MR from a descriptor of %d bytes", d.MRDescSize)
		}
		if _, err := d.peerConfig(); (err == nil) != (d.PcfgDescSize > 0) {
			t.Fatalf("peer config of %d bytes: %v", d.PcfgDescSize, err)
		}
	})
}

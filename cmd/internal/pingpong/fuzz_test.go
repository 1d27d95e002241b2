package pingpong

import (
	"net/netip"
	"testing"

	"github.com/purerdma/purerdma/uverbs"
)

// FuzzDecodeDest reads arbitrary bytes as the peer's address message of
// the TCP exchange. A message that decodes re-encodes to the 52 bytes that
// ibv_rc_pingpong sends, which decode to the same address, and its GID
// prints as an address that parses back to it.
func FuzzDecodeDest(f *testing.F) {
	f.Add(Dest{QPN: 0x11, PSN: 0xabcdef, GID: gid("::ffff:10.0.0.1")}.Encode())
	f.Add(Dest{LID: 0x1234, QPN: 0xffffff, GID: gid("fe80::1234:5678:9abc:def0")}.Encode())
	f.Add([]byte("1:2:3:0000000000000000000000000000000G"))
	f.Add([]byte("ffff:1000000:0:00000000000000000000000000000000\x00junk"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Decode(b)
		if err != nil {
			return
		}
		msg := d.Encode()
		if len(msg) != MsgSize || msg[MsgSize-1] != 0 {
			t.Fatalf("%+v encodes to %q", d, msg)
		}
		if again, err := Decode(msg); err != nil || again != d {
			t.Fatalf("decode(encode(%+v)) = %+v, %v", d, again, err)
		}
		checkGIDText(t, d.GID)
	})
}

// FuzzFormatGID prints arbitrary GIDs as inet_ntop does; the text must be
// an IPv6 address, or the dotted IPv4 form of the mapped and compatible
// ones, that parses back to the GID.
func FuzzFormatGID(f *testing.F) {
	for _, s := range []string{"::", "::1", "::ffff:10.0.0.1", "::10.0.0.1", "fe80::1", "1:0:0:1:0:0:0:1", "1:2:3:4:5:6:7:8"} {
		g := gid(s)
		f.Add(g[:])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var g uverbs.GID
		copy(g[:], b)
		checkGIDText(t, g)
	})
}

func checkGIDText(t *testing.T, g uverbs.GID) {
	t.Helper()
	s := FormatGID(g)
	a, err := netip.ParseAddr(s)
	if err != nil || a.As16() != [16]byte(g) {
		t.Fatalf("GID % x prints as %q, which parses as %v, %v", g[:], s, a, err)
	}
}

package pingpong

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/uverbs"
)

func gid(s string) uverbs.GID { return uverbs.GID(netip.MustParseAddr(s).As16()) }

// The wanted messages are what sprintf("%04x:%06x:%06x:%s") with
// gid_to_wire_gid gives on a little-endian host: each 32-bit word of the
// GID is loaded in host order (bytes 0a 00 00 01 give 0x0100000a), htobe32
// swaps it back to 0x0a000001 and %08x prints "0a000001". The message is
// written as sizeof msg = 52 bytes, its NUL included.
func TestEncodeDecode(t *testing.T) {
	tests := []struct {
		d    Dest
		want string
	}{
		{Dest{LID: 0, QPN: 0x11, PSN: 0xabcdef, GID: gid("::ffff:10.0.0.1")},
			"0000:000011:abcdef:00000000000000000000ffff0a000001"},
		{Dest{LID: 0x1234, QPN: 0xffffff, PSN: 0, GID: gid("fe80::1234:5678:9abc:def0")},
			"1234:ffffff:000000:fe800000000000001234567 89abcdef0"},
		{Dest{LID: 1, QPN: 0x123, PSN: 0x42}, "0001:000123:000042:00000000000000000000000000000000"},
	}
	for _, tt := range tests {
		want := strings.ReplaceAll(tt.want, " ", "")
		got := tt.d.Encode()
		if len(got) != MsgSize || string(got[:len(want)]) != want || strings.Trim(string(got[len(want):]), "\x00") != "" {
			t.Errorf("encode(%+v) = %q, want %q and NULs to %d bytes", tt.d, got, want, MsgSize)
		}
		back, err := Decode(got)
		if err != nil || back != tt.d {
			t.Errorf("Decode(%q) = %+v, %v; want %+v", got, back, err, tt.d)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, msg := range []string{
		"",
		"0000:000011:abcdef",
		"0000:000011:abcdef:00000000000000000000ffff0a00000",   // 31 digits
		"0000:000011:abcdef:00000000000000000000ffff0a0000011", // 33
		"0000:000011:abcdef:0000000000000000000zffff0a000001",
		"x000:000011:abcdef:00000000000000000000ffff0a000001",
		"10000:000011:abcdef:00000000000000000000ffff0a000001", // LID over 16 bits
		"0000:1000000:abcdef:00000000000000000000ffff0a000001", // QPN over 24 bits
		"0000:000011:abcdef:0000:0000",
	} {
		if d, err := Decode([]byte(msg)); err == nil {
			t.Errorf("Decode(%q) = %+v, want an error", msg, d)
		}
	}
}

// FormatGID must print what glibc's inet_ntop(AF_INET6) prints.
func TestFormatGID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"::", "::"},
		{"::1", "::1"},
		{"::ffff:10.0.0.1", "::ffff:10.0.0.1"},
		{"::10.0.0.1", "::10.0.0.1"}, // IPv4-compatible: glibc prints it dotted
		{"fe80::5054:ff:fe12:3456", "fe80::5054:ff:fe12:3456"},
		{"1:0:0:2:0:0:0:3", "1:0:0:2::3"},
		{"1:0:0:2:0:0:3:4", "1::2:0:0:3:4"},    // the first of equal runs
		{"1:0:2:3:4:5:6:7", "1:0:2:3:4:5:6:7"}, // a single zero stays
		{"1::", "1::"},
		{"2001:db8::ffff:1:1", "2001:db8::ffff:1:1"},
		{"0:0:0:0:0:ffff:0:1", "::ffff:0.0.0.1"},
		{"0:0:0:0:1:ffff:0:1", "::1:ffff:0:1"},
	}
	for _, tt := range tests {
		if got := FormatGID(gid(tt.in)); got != tt.want {
			t.Errorf("FormatGID(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

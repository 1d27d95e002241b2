package main

import (
	"bytes"
	"context"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestMain fails the binary if a run leaves IDs, QPs, CQs, MRs or fds
// behind.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func TestParseArgs(t *testing.T) {
	def := defaultOptions()
	with := func(f func(o *options)) options {
		o := def
		f(&o)
		return o
	}
	tests := []struct {
		args   []string
		want   options
		stdout string // debug lines
	}{
		{[]string{"-s"}, with(func(o *options) { o.server = 1 }), ""},
		{[]string{"-c", "-a", "192.168.77.1", "-I", "10.0.0.1", "-p", "1234", "-C", "10", "-S", "100", "-v", "-V"},
			with(func(o *options) {
				o.server, o.addr, o.source = 0, netip.MustParseAddr("192.168.77.1"), netip.MustParseAddr("10.0.0.1")
				o.port, o.count, o.size, o.verbose, o.validate = 1234, 10, 100, 1, 1
			}), ""},
		// Grouped flags, attached arguments, operands skipped, -- ends.
		{[]string{"-svvV", "-p7175", "extra", "-C3", "--", "-c"},
			with(func(o *options) { o.server, o.verbose, o.validate, o.port, o.count = 1, 2, 1, 7175, 3 }), ""},
		// atoi: leading blanks and trailing junk; the port wraps to 16 bits.
		{[]string{"-s", "-p", " 65537x", "-C", "7abc", "-a", "::1"},
			with(func(o *options) { o.server, o.port, o.count, o.addr = 1, 1, 7, netip.MustParseAddr("::1") }), ""},
		{[]string{"-s", "-P", "-q", "-S", "23"}, with(func(o *options) { o.server, o.persistent, o.selfQP, o.size = 1, true, true, 23 }), ""},
		{[]string{"-S", "99", "-d", "-c", "-S", "65535", "-C", "0", "-v", "-V", "-p", "9"},
			with(func(o *options) {
				o.server, o.size, o.count, o.verbose, o.validate, o.debug, o.port = 0, 65535, 0, 1, 1, 1, 9
			}), "client\nsize 65535\ncount 0\nverbose\nvalidate data\nport 9\n"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		got, code := parseArgs(context.Background(), tt.args, &stdout, &stderr)
		if code != 0 || stderr.Len() != 0 {
			t.Errorf("parseArgs(%q) = %d, stderr %q", tt.args, code, stderr.String())
			continue
		}
		if got != tt.want {
			t.Errorf("parseArgs(%q) = %+v, want %+v", tt.args, got, tt.want)
		}
		if stdout.String() != tt.stdout {
			t.Errorf("parseArgs(%q) stdout %q, want %q", tt.args, stdout.String(), tt.stdout)
		}
	}
}

// Bad command lines exit as rping does: 22 (EINVAL) with a message on
// stderr for a bad size or count, the usage text on stdout for getopt's
// complaints and a missing -s or -c. A later good -a clears an earlier
// error, as in C.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stderr string
		usage  bool
	}{
		{[]string{"-s", "-S", "22"}, 22, "Invalid size 22 (valid range is 23 to 65536)\n", false},
		{[]string{"-s", "-S", "65536"}, 22, "Invalid size 65536 (valid range is 23 to 65536)\n", false},
		{[]string{"-c", "-C", "-1"}, 22, "Invalid count -1\n", false},
		{[]string{"-x"}, 22, "", true},
		{[]string{"-s", "-t", "1"}, 22, "", true},
		{[]string{"-s", "-p"}, 22, "", true},
		{[]string{"-v"}, 22, "", true},
		{[]string{"-s", "-S", "1", "-a", "127.0.0.1"}, 0, "Invalid size 1 (valid range is 23 to 65536)\n", false},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		_, code := parseArgs(context.Background(), tt.args, &stdout, &stderr)
		if code != tt.code || stderr.String() != tt.stderr {
			t.Errorf("parseArgs(%q) = %d, stderr %q; want %d, %q", tt.args, code, stderr.String(), tt.code, tt.stderr)
		}
		if got := strings.HasPrefix(stdout.String(), "rping -s [-vVd]"); got != tt.usage {
			t.Errorf("parseArgs(%q) printed usage: %v, want %v", tt.args, got, tt.usage)
		}
	}
}

func TestRdmaInfo(t *testing.T) {
	tests := []struct {
		info rdmaInfo
		wire string
	}{
		{rdmaInfo{buf: 0x0102030405060708, rkey: 0x090a0b0c, size: 0x0d0e0f10},
			"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"},
		{rdmaInfo{buf: 0x7f12_3456_7000, rkey: 0x1234, size: 64},
			"\x00\x00\x7f\x12\x34\x56\x70\x00\x00\x00\x12\x34\x00\x00\x00\x40"},
		{rdmaInfo{}, strings.Repeat("\x00", 16)},
	}
	for _, tt := range tests {
		b := make([]byte, infoSize)
		tt.info.encode(b)
		if string(b) != tt.wire {
			t.Errorf("encode(%+v) = %x, want %x", tt.info, b, tt.wire)
		}
		if got := decodeInfo([]byte(tt.wire)); got != tt.info {
			t.Errorf("decode(%x) = %+v, want %+v", tt.wire, got, tt.info)
		}
	}
}

// cPattern is rping_test_client's loop, transcribed with C's types: an
// int start and an unsigned char c.
func cPattern(size, pings int) []string {
	var out []string
	start := 65
	for ping := 0; ping < pings; ping++ {
		buf := make([]byte, size)
		msg := "rdma-ping-" + itoa(ping) + ": "
		cc := len(msg)
		copy(buf, msg[:min(cc, size-1)])
		var c uint8 = uint8(start)
		for i := cc; i < size; i++ {
			buf[i] = c
			c++
			if c > 122 {
				c = 65
			}
		}
		start++
		if start > 122 {
			start = 65
		}
		buf[size-1] = 0
		out = append(out, string(buf))
	}
	return out
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestFormatPing(t *testing.T) {
	// Literal values of the C tool's output (rping -c -v -S 64).
	buf := make([]byte, 64)
	start := formatPing(buf, 0, 'A')
	if got, want := string(cString(buf)), "rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqr"; got != want {
		t.Errorf("ping 0 = %q, want %q", got, want)
	}
	for i := 1; i <= 9; i++ {
		start = formatPing(buf, i, start)
	}
	if got, want := string(cString(buf)), "rdma-ping-9: JKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyzA"; got != want {
		t.Errorf("ping 9 = %q, want %q", got, want)
	}

	for _, size := range []int{23, 26, 64, 100, 200} {
		const pings = 130 // start wraps from 'z' to 'A' after 58 pings
		want := cPattern(size, pings)
		buf := make([]byte, size)
		start := byte('A')
		for ping := range pings {
			start = formatPing(buf, ping, start)
			if string(buf) != want[ping] {
				t.Fatalf("size %d ping %d:\n%q\nwant\n%q", size, ping, buf, want[ping])
			}
		}
	}
}

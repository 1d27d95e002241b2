package uverbs

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ipv4GRH is a RoCE v2 over IPv4 receive buffer head: 20 bytes the device
// leaves alone (filled with junk here, as they may be) and the IPv4
// header, with a correct checksum.
func ipv4GRH(junk byte, src, dst [4]byte, tos, ttl uint8) []byte {
	b := make([]byte, GRHSize)
	for i := range 20 {
		b[i] = junk
	}
	h := b[20:]
	h[0] = 0x45
	h[1] = tos
	h[8] = ttl
	h[9] = ipprotoUDP
	copy(h[12:], src[:])
	copy(h[16:], dst[:])
	binary.BigEndian.PutUint16(h[10:], ipv4Checksum(h))
	return b
}

func TestParseGRH(t *testing.T) {
	gid := func(s string) GID { return GID(netip.MustParseAddr(s).As16()) }
	v6 := func(next byte, src, dst string) []byte {
		b := make([]byte, GRHSize)
		binary.BigEndian.PutUint32(b, 6<<28|0xa5<<20|0x12345)
		b[6], b[7] = next, 17
		s, d := gid(src), gid(dst)
		copy(b[8:], s[:])
		copy(b[24:], d[:])
		return b
	}
	tests := []struct {
		name string
		grh  []byte
		want grhInfo
	}{
		{"RoCE v2 IPv6", v6(ipprotoUDP, "fe80::1", "fe80::2"),
			grhInfo{local: gid("fe80::2"), remote: gid("fe80::1"), typ: GIDTypeRoCEv2, flowLabel: 0x12345, hopLimit: 17, tclass: 0xa5}},
		{"RoCE v1", v6(ibNextHdr, "fe80::1", "fe80::2"),
			grhInfo{local: gid("fe80::2"), remote: gid("fe80::1"), typ: GIDTypeRoCEv1, flowLabel: 0x12345, hopLimit: 17, tclass: 0xa5}},
		{"RoCE v2 IPv4", ipv4GRH(0, [4]byte{192, 168, 77, 2}, [4]byte{192, 168, 77, 1}, 0x20, 64),
			grhInfo{local: gid("::ffff:192.168.77.1"), remote: gid("::ffff:192.168.77.2"), typ: GIDTypeRoCEv2, hopLimit: 64, tclass: 0x20}},
		// An IPv6 version nibble in the unused half does not hide a
		// valid IPv4 header; its other junk bytes give the flow label.
		{"RoCE v2 IPv4, junk first half", ipv4GRH(0x60, [4]byte{10, 0, 0, 2}, [4]byte{10, 0, 0, 1}, 0, 1),
			grhInfo{local: gid("::ffff:10.0.0.1"), remote: gid("::ffff:10.0.0.2"), typ: GIDTypeRoCEv2, flowLabel: 0x06060, hopLimit: 1}},
	}
	for _, tt := range tests {
		got, err := parseGRH(tt.grh)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(grhInfo{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}

	// An IPv6 header whose second half happens to look like IPv4 but
	// with a wrong checksum stays IPv6.
	b := v6(ipprotoUDP, "fe80::1", "fe80::45")
	b[20] = 0x45
	if got, err := parseGRH(b); err != nil || got.local != gid("fe80::45") {
		t.Errorf("IPv6 with an IPv4-like tail: %+v, %v", got, err)
	}

	badCsum := ipv4GRH(0x60, [4]byte{10, 0, 0, 2}, [4]byte{10, 0, 0, 1}, 0, 1)
	badCsum[30]++
	mcast4 := ipv4GRH(0, [4]byte{10, 0, 0, 2}, [4]byte{224, 0, 0, 1}, 0, 1)
	for _, tt := range []struct {
		name string
		grh  []byte
		want error
	}{
		{"short", make([]byte, GRHSize-1), ErrInvalid},
		{"no version", make([]byte, GRHSize), syscall.EPROTONOSUPPORT},
		{"IPv6 multicast", v6(ipprotoUDP, "fe80::1", "ff0e::1"), syscall.EINVAL},
		{"IPv4 multicast", mcast4, syscall.EINVAL},
		{"IPv6 next header TCP", v6(6, "fe80::1", "fe80::2"), syscall.EPROTONOSUPPORT},
		// 0x60 junk, a bad IPv4 checksum: read as IPv6, whose next
		// header byte (junk 0x60) is neither UDP nor the BTH.
		{"IPv4 bad checksum", badCsum, syscall.EPROTONOSUPPORT},
	} {
		if _, err := parseGRH(tt.grh); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}

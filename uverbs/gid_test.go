package uverbs

import (
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustGID(t *testing.T, s string) GID {
	t.Helper()
	ip := net.ParseIP(s)
	if ip == nil {
		t.Fatalf("bad GID %q", s)
	}
	return GID(ip.To16())
}

func TestSysfsGIDTable(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skipf("no loopback interface: %v", err)
	}
	root := t.TempDir()
	port := "class/infiniband/rxe0/ports/1/"
	writeTree(t, root, map[string]string{
		"class/infiniband/rxe0/node_type": "1: CA",
		port + "link_layer":               "Ethernet",
		port + "gids/0":                   "fe80:0000:0000:0000:5054:00ff:fe12:3456",
		port + "gids/1":                   "fe80:0000:0000:0000:5054:00ff:fe12:3456",
		port + "gids/2":                   "0000:0000:0000:0000:0000:ffff:c0a8:4d01",
		port + "gids/3":                   "0000:0000:0000:0000:0000:ffff:c0a8:4d01",
		port + "gids/4":                   "0000:0000:0000:0000:0000:0000:0000:0000",
		port + "gids/10":                  "fd00:0000:0000:0000:0000:0000:0000:0001",
		port + "gid_attrs/types/0":        "IB/RoCE v1",
		port + "gid_attrs/types/1":        "RoCE v2",
		port + "gid_attrs/types/2":        "IB/RoCE v1",
		port + "gid_attrs/types/3":        "RoCE v2",
		port + "gid_attrs/types/10":       "RoCE v2",
		port + "gid_attrs/ndevs/0":        "lo",
		port + "gid_attrs/ndevs/1":        "lo",
		port + "gid_attrs/ndevs/2":        "lo",
		port + "gid_attrs/ndevs/3":        "lo",
		port + "gid_attrs/ndevs/10":       "no-such-netdev",
	})
	// gids/4 is an empty entry: the kernel prints a zero GID and fails the
	// read of its type with EINVAL (which a file cannot fake; the VM test
	// covers it). The zero GID alone has it skipped.
	got, err := sysfsGIDTable(root, "rxe0", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []GIDEntry{
		{GID: mustGID(t, "fe80::5054:ff:fe12:3456"), Index: 0, Port: 1, Type: GIDTypeRoCEv1, Ifindex: lo.Index},
		{GID: mustGID(t, "fe80::5054:ff:fe12:3456"), Index: 1, Port: 1, Type: GIDTypeRoCEv2, Ifindex: lo.Index},
		{GID: mustGID(t, "::ffff:192.168.77.1"), Index: 2, Port: 1, Type: GIDTypeRoCEv1, Ifindex: lo.Index},
		{GID: mustGID(t, "::ffff:192.168.77.1"), Index: 3, Port: 1, Type: GIDTypeRoCEv2, Ifindex: lo.Index},
		{GID: mustGID(t, "fd00::1"), Index: 10, Port: 1, Type: GIDTypeRoCEv2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sysfsGIDTable mismatch (-want +got):\n%s", diff)
	}

	if _, err := sysfsGIDTable(root, "rxe0", 2); err == nil {
		t.Error("sysfsGIDTable of a missing port: no error")
	}
}

func TestSysfsGIDTableIBAndIWARP(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"class/infiniband/mlx0/node_type":                   "1: CA",
		"class/infiniband/mlx0/ports/1/link_layer":          "InfiniBand",
		"class/infiniband/mlx0/ports/1/gids/0":              "fe80:0000:0000:0000:0002:c903:0001:0002",
		"class/infiniband/mlx0/ports/1/gid_attrs/types/0":   "IB/RoCE v1",
		"class/infiniband/siw0/node_type":                   "4: RNIC",
		"class/infiniband/siw0/ports/1/link_layer":          "Ethernet",
		"class/infiniband/siw0/ports/1/gids/0":              "5254:0012:3456:0000:0000:0000:0000:0000",
		"class/infiniband/siw0/ports/1/gid_attrs/types/0":   "IB/RoCE v1",
		"class/infiniband/old0/ports/1/gids/0":              "fe80:0000:0000:0000:0002:c903:0001:0003",
		"class/infiniband/bad0/ports/1/gids/0":              "fe80::1",
		"class/infiniband/bad0/ports/1/gid_attrs/types/0":   "RoCE v3",
		"class/infiniband/worse0/ports/1/gids/0":            "not a gid",
		"class/infiniband/worse0/ports/1/gid_attrs/types/0": "RoCE v2",
	})
	for _, tt := range []struct {
		dev     string
		want    []GIDEntry
		wantErr bool
	}{
		{dev: "mlx0", want: []GIDEntry{{GID: mustGID(t, "fe80::2:c903:1:2"), Port: 1, Type: GIDTypeIB}}},
		{dev: "siw0", want: []GIDEntry{{GID: mustGID(t, "5254:12:3456::"), Port: 1, Type: GIDTypeIB}}},
		// A kernel without gid_attrs: every entry is IB/RoCE v1.
		{dev: "old0", want: []GIDEntry{{GID: mustGID(t, "fe80::2:c903:1:3"), Port: 1, Type: GIDTypeIB}}},
		{dev: "bad0", wantErr: true},
		{dev: "worse0", wantErr: true},
	} {
		got, err := sysfsGIDTable(root, tt.dev, 1)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: error = %v, want error %v", tt.dev, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tt.dev, diff)
		}
	}
}

func TestGIDString(t *testing.T) {
	tests := []struct {
		gid  GID
		want string
	}{
		{GID{}, "::"},
		{GID{0xfe, 0x80, 8: 0x50, 0x54, 0x00, 0xff, 0xfe, 0x12, 0x34, 0x56}, "fe80::5054:ff:fe12:3456"},
		{GID{10: 0xff, 0xff, 192, 168, 77, 1}, "192.168.77.1"}, // as net.IP prints it
		{GID{0xfd, 15: 1}, "fd00::1"},
	}
	for _, tt := range tests {
		if got := tt.gid.String(); got != tt.want {
			t.Errorf("GID(%x).String() = %q, want %q", tt.gid[:], got, tt.want)
		}
		if got, want := tt.gid.IsZero(), tt.want == "::"; got != want {
			t.Errorf("GID(%x).IsZero() = %v, want %v", tt.gid[:], got, want)
		}
	}
}

func TestGIDTypeString(t *testing.T) {
	for typ, want := range map[GIDType]string{
		GIDTypeIB: "IB", GIDTypeRoCEv1: "RoCE v1", GIDTypeRoCEv2: "RoCE v2", 7: "GIDType(7)",
	} {
		if got := typ.String(); got != want {
			t.Errorf("GIDType(%d).String() = %q, want %q", uint8(typ), got, want)
		}
	}
}

func TestRoCEv2Index(t *testing.T) {
	v4 := GID{10: 0xff, 0xff, 192, 168, 77, 1}
	v6 := GID{0xfd, 15: 1}
	ents := []GIDEntry{
		{GID: GID{0xfe, 0x80, 15: 1}, Index: 0, Type: GIDTypeRoCEv1},
		{GID: GID{0xfe, 0x80, 15: 1}, Index: 1, Type: GIDTypeRoCEv2},
		{GID: v4, Index: 2, Type: GIDTypeRoCEv1},
		{GID: v4, Index: 3, Type: GIDTypeRoCEv2},
		{GID: v6, Index: 4, Type: GIDTypeRoCEv1},
		{GID: v6, Index: 7, Type: GIDTypeRoCEv2},
		{GID: GID{10: 0xff, 0xff, 10, 0, 0, 1}, Index: 8, Type: GIDTypeRoCEv1}, // v1 only
	}
	tests := []struct {
		addr string
		want int
	}{
		{"192.168.77.1", 3},
		{"::ffff:192.168.77.1", 3}, // already mapped
		{"fd00::1", 7},
		{"fe80::1", 1},
		{"192.168.77.2", -1},
		{"10.0.0.1", -1},    // RoCE v1 entries do not count
		{"::c0a8:4d01", -1}, // IPv4-compatible, not IPv4-mapped
		{"fd00::2", -1},
	}
	for _, tt := range tests {
		if got := roceV2Index(ents, netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("roceV2Index(%s) = %d, want %d", tt.addr, got, tt.want)
		}
	}
	if roceV2Index(nil, netip.MustParseAddr("192.168.77.1")) != -1 {
		t.Error("roceV2Index on an empty table found an entry")
	}
}

func TestGIDIndexInvalidAddr(t *testing.T) {
	var c Context
	if _, err := c.GIDIndex(1, netip.Addr{}); err == nil || errors.Is(err, ErrNoGID) {
		t.Errorf("GIDIndex(invalid addr) error = %v, want a non-ErrNoGID error", err)
	}
}

func TestGIDIsMulticast(t *testing.T) {
	for _, tt := range []struct {
		addr string
		want bool
	}{
		{"ff0e::1", true},
		{"ff02::1:2", true},
		{"::ffff:239.1.2.3", true},
		{"::ffff:224.0.0.1", true},
		{"::ffff:192.168.77.1", false},
		{"::ffff:240.0.0.1", false},
		{"fe80::1", false},
		{"::224.0.0.1", false}, // IPv4-compatible, not mapped
	} {
		g := GID(netip.MustParseAddr(tt.addr).As16())
		if got := g.IsMulticast(); got != tt.want {
			t.Errorf("GID(%s).IsMulticast() = %v, want %v", tt.addr, got, tt.want)
		}
	}
}

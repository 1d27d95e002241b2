package uverbs

import (
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/testenv"
)

func TestGIDTableRXE(t *testing.T) {
	d := testenv.RoCE(t)
	c := openTest(t, d)

	got, err := c.GIDTable(1)
	if err != nil {
		t.Fatalf("GIDTable(1): %v", err)
	}
	for _, e := range got {
		t.Logf("%d %-8s %-40s ifindex %d", e.Index, e.Type, e.GID, e.Ifindex)
	}
	fromSysfs, err := sysfsGIDTable(sysfsRoot, d.Name, 1)
	if err != nil {
		t.Fatalf("sysfsGIDTable: %v", err)
	}
	if diff := cmp.Diff(fromSysfs, got); diff != "" {
		t.Errorf("ioctl GID table differs from sysfs (-sysfs +ioctl):\n%s", diff)
	}

	ifi, err := net.InterfaceByName(d.Netdev)
	if err != nil {
		t.Fatalf("netdev %s: %v", d.Netdev, err)
	}
	addr := netip.MustParseAddr(d.Addr)
	want := GID(addr.As16())
	index := -1
	for _, e := range got {
		if e.Port != 1 || e.GID.IsZero() {
			t.Errorf("entry %d: port %d, GID %s", e.Index, e.Port, e.GID)
		}
		if e.Type == GIDTypeRoCEv2 && e.GID == want {
			index = e.Index
			if e.Ifindex != ifi.Index {
				t.Errorf("RoCE v2 entry %d for %s has ifindex %d, want %d (%s)", e.Index, addr, e.Ifindex, ifi.Index, d.Netdev)
			}
		}
	}
	if index < 0 {
		t.Fatalf("no RoCE v2 entry for %s (%s)", addr, want)
	}

	gi, err := c.GIDIndex(1, addr)
	if err != nil || gi != index {
		t.Errorf("GIDIndex(1, %s) = %d, %v; want %d", addr, gi, err, index)
	}
	other := netip.MustParseAddr("203.0.113.9")
	if gi, err := c.GIDIndex(1, other); !errors.Is(err, ErrNoGID) {
		t.Errorf("GIDIndex(1, %s) = %d, %v; want ErrNoGID", other, gi, err)
	}
	if _, err := c.GIDTable(2); err == nil {
		t.Error("GIDTable(2) on a one-port device: no error")
	}

	c.Close()
	if _, err := c.GIDTable(1); !errors.Is(err, ErrClosed) {
		t.Errorf("GIDTable after Close: %v, want ErrClosed", err)
	}
}

func TestGIDTableSIW(t *testing.T) {
	d := testenv.Only(t, "siw", "siw's GID table, made from its netdev's MAC")
	c := openTest(t, d)

	got, err := c.GIDTable(1)
	if err != nil {
		t.Fatalf("GIDTable(1): %v", err)
	}
	for _, e := range got {
		t.Logf("%d %-8s %-40s ifindex %d", e.Index, e.Type, e.GID, e.Ifindex)
	}
	if len(got) < 1 {
		t.Fatal("GIDTable(1) is empty, want the MAC-derived entry")
	}
	// iWARP does not address by GID.
	if d.Addr != "" {
		addr := netip.MustParseAddr(d.Addr)
		if gi, err := c.GIDIndex(1, addr); !errors.Is(err, ErrNoGID) {
			t.Errorf("GIDIndex(1, %s) = %d, %v; want ErrNoGID", addr, gi, err)
		}
	}

	c.Close()
	if _, err := c.GIDTable(1); !errors.Is(err, ErrClosed) {
		t.Errorf("GIDTable after Close: %v, want ErrClosed", err)
	}
}

//go:build linux

package rtnl

import (
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestVethVM drives the real kernel through a veth pair's life. It changes
// the machine's links, so it runs only in the test VM.
func TestVethVM(t *testing.T) {
	testenv.RequireVM(t)
	const name, peer = "rtnltest0", "rtnltest1"
	c, err := Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	if err := c.AddVeth(name, peer); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.DelLink(name) })
	if err := c.AddVeth(name, peer); !errors.Is(err, unix.EEXIST) {
		t.Errorf("second AddVeth: %v, want EEXIST", err)
	}

	for _, n := range []string{name, peer} {
		if err := c.SetUp(n); err != nil {
			t.Fatal(err)
		}
		if !isUp(t, n) {
			t.Errorf("%s is not up after SetUp", n)
		}
	}

	prefixes := []netip.Prefix{
		netip.MustParsePrefix("10.99.0.1/24"),
		netip.MustParsePrefix("fd00:99::1/64"),
	}
	for _, p := range prefixes {
		if err := c.AddAddr(name, p); err != nil {
			t.Fatal(err)
		}
	}
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		t.Fatal(err)
	}
	var got []netip.Prefix
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			got = append(got, p)
		}
	}
	for _, p := range prefixes {
		if !slices.Contains(got, p) {
			t.Errorf("%s has addresses %v, want %v among them", name, got, p)
		}
	}

	if err := c.SetDown(name); err != nil {
		t.Fatal(err)
	}
	if isUp(t, name) {
		t.Errorf("%s is up after SetDown", name)
	}

	if err := c.DelLink(name); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{name, peer} {
		if _, err := net.InterfaceByName(n); err == nil {
			t.Errorf("%s still exists after DelLink(%s)", n, name)
		}
	}
	if err := c.DelLink(name); !errors.Is(err, unix.ENODEV) {
		t.Errorf("DelLink of a deleted link: %v, want ENODEV", err)
	}
}

func isUp(t *testing.T, name string) bool {
	t.Helper()
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return ifi.Flags&net.FlagUp != 0
}

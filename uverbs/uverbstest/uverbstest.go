// Package uverbstest gives tests the RDMA devices of the guest they run
// in. Run the tests with cmd/rdmavm, which boots a QEMU guest with
// soft-RoCE (rxe0) and SoftiWARP (siw0) and runs each test binary there:
//
//	go install github.com/purerdma/purerdma/cmd/rdmavm@latest
//	go test -exec rdmavm ./...
//
// The guest names its devices in the environment (PURERDMA_VM=1,
// PURERDMA_RXE=rxe0, PURERDMA_RXE_ADDR and so on; docs/testing.md lists
// them). On a host that is not such a guest, a test that asks for a
// device is skipped; inside the guest a missing device fails it, so a
// broken guest never passes as a skip.
package uverbstest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Device is an RDMA device of the guest.
type Device struct {
	Name   string // the RDMA device, e.g. "rxe0": uverbs.OpenDevice's name
	Driver string // "rxe" (RoCE) or "siw" (iWARP)
	Netdev string // the network device it sits on, e.g. "veth0"
	Addr   string // its netdev's IPv4 address, for rdma_cm: rdmacm.Dial(ctx, Addr+":port")
}

// InGuest reports whether the program runs in a guest of cmd/rdmavm.
func InGuest() bool { return os.Getenv("PURERDMA_VM") == "1" }

// Kernel is the guest's kernel release (uname -r), "" outside a guest.
func Kernel() string { return os.Getenv("PURERDMA_VM_KERNEL") }

// Lookup returns the guest's device of driver ("rxe" or "siw") as the
// environment names it, and an error when there is none or it is
// missing from the kernel.
func Lookup(driver string) (Device, error) {
	key := "PURERDMA_" + strings.ToUpper(driver)
	d := Device{Name: os.Getenv(key), Driver: driver, Netdev: os.Getenv(key + "_NETDEV"), Addr: os.Getenv(key + "_ADDR")}
	if d.Name == "" {
		return d, fmt.Errorf("the guest has no %s device (%s is empty; rdmavm -devices names them, and arm64 guests have no siw)", driver, key)
	}
	if _, err := os.Stat(filepath.Join("/sys/class/infiniband", d.Name)); err != nil {
		return d, fmt.Errorf("%s device %s is missing: %w", driver, d.Name, err)
	}
	return d, nil
}

// Drivers are the drivers of the devices the guest created, in the order
// rxe, siw.
func Drivers() []string {
	var out []string
	for _, d := range []string{"rxe", "siw"} {
		if os.Getenv("PURERDMA_"+strings.ToUpper(d)) != "" {
			out = append(out, d)
		}
	}
	return out
}

// Require returns the guest's device of driver ("rxe" or "siw"). Outside
// a guest the test is skipped; inside one a missing device fails it.
func Require(t testing.TB, driver string) Device {
	t.Helper()
	skipOutside(t)
	d, err := Lookup(driver)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// All returns every device of the guest (rxe0, and siw0 on amd64).
// Outside a guest the test is skipped; inside one a guest without
// devices, or a named device that is missing, fails it.
func All(t testing.TB) []Device {
	t.Helper()
	skipOutside(t)
	drivers := Drivers()
	if len(drivers) == 0 {
		t.Fatal("the guest names no RDMA device (PURERDMA_RXE and PURERDMA_SIW are empty)")
	}
	var out []Device
	for _, driver := range drivers {
		out = append(out, Require(t, driver))
	}
	return out
}

func skipOutside(t testing.TB) {
	t.Helper()
	if !InGuest() {
		t.Skip("no RDMA device: run the test in a guest with go test -exec rdmavm (github.com/purerdma/purerdma/cmd/rdmavm)")
	}
}

// CTool returns the path of rdma-core's or perftest's C program name
// (rping, ibv_rc_pingpong, ib_send_bw...), which rdmavm -ctools packs.
// Without -ctools, or outside a guest, the test is skipped; with it, a
// missing program fails the test.
func CTool(t testing.TB, name string) string {
	t.Helper()
	skipOutside(t)
	if os.Getenv("PURERDMA_CTOOLS") != "1" {
		t.Skipf("needs the C tools: go test -exec 'rdmavm -ctools' (for %s)", name)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("rdmavm -ctools packed no %s: %v", name, err)
	}
	return p
}

// Pair is this guest's side of a two-guest run (rdmavm -pair): guests a
// and b on one virtual Ethernet segment, each with an rxe device on its
// NIC, each running the same test binary. The server side of a test runs
// in a, the client side in b.
type Pair struct {
	Name     string // this guest: "a" or "b"
	Role     string // "server" or "client"
	Device   Device // the rxe device on the wire
	Peer     string // the other guest's address on the wire
	PeerName string // the other guest: "b" or "a"
}

// Server reports whether this side runs the server half of the tests.
func (p Pair) Server() bool { return p.Role == "server" }

// LookupPair returns this guest's side of the two-guest run from the
// environment, and an error when it is incomplete or the wire's device
// is missing. ok is false outside a two-guest run.
func LookupPair() (p Pair, ok bool, err error) {
	name := os.Getenv("PURERDMA_PAIR")
	if name == "" {
		return Pair{}, false, nil
	}
	p = Pair{
		Name:     name,
		Role:     os.Getenv("PURERDMA_PAIR_ROLE"),
		Peer:     os.Getenv("PURERDMA_PAIR_PEER"),
		PeerName: os.Getenv("PURERDMA_PAIR_PEER_NAME"),
		Device: Device{
			Name:   os.Getenv("PURERDMA_PAIR_DEV"),
			Driver: "rxe",
			Netdev: os.Getenv("PURERDMA_PAIR_NETDEV"),
			Addr:   os.Getenv("PURERDMA_PAIR_ADDR"),
		},
	}
	switch {
	case p.Role != "server" && p.Role != "client":
		return p, true, fmt.Errorf("guest %s: PURERDMA_PAIR_ROLE is %q, want server or client", p.Name, p.Role)
	case p.Peer == "" || p.Device.Addr == "" || p.Device.Netdev == "":
		return p, true, fmt.Errorf("guest %s: the pair's environment is incomplete: %+v", p.Name, p)
	}
	if _, err := os.Stat(filepath.Join("/sys/class/infiniband", p.Device.Name)); err != nil {
		return p, true, fmt.Errorf("guest %s: wire device %q is missing: %w", p.Name, p.Device.Name, err)
	}
	return p, true, nil
}

// RequirePair returns this guest's side of the two-guest run. Outside one
// the test is skipped; inside one an incomplete environment fails it.
func RequirePair(t testing.TB) Pair {
	t.Helper()
	p, ok, err := LookupPair()
	if !ok {
		t.Skip("needs two guests on one wire: go test -exec 'rdmavm -pair'")
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/purerdma/purerdma/uverbs/uverbstest"
)

// Pair is this guest's side of the two-guest run (go run ./hack/vm pair):
// two guests, a and b, on one virtual Ethernet segment, each with an rxe
// device on its NIC. The server side of a test runs in a, the client side
// in b.
type Pair struct {
	Name     string // this guest: "a" or "b"
	Role     string // "server" or "client"
	Dev      Dev    // the rxe device on the wire
	Peer     string // the other guest's address on the wire
	PeerName string
	PowerOff string // the console line that has the host pull this guest's plug
}

// InPair reports whether the test runs in a guest of the two-guest run.
func InPair() bool { return os.Getenv("PURERDMA_PAIR") != "" }

// Server reports whether this side runs the server half of the tests.
func (p Pair) Server() bool { return p.Role == "server" }

// RequirePair returns this guest's side of the two-guest run. Outside it
// the test skips; inside it, a missing role, address or device fails.
func RequirePair(t testing.TB) Pair {
	t.Helper()
	u, ok, err := uverbstest.LookupPair()
	if !ok {
		t.Skip("needs two guests on one wire: go run ./hack/vm pair (make test-pair)")
	}
	p := Pair{
		Name:     u.Name,
		Role:     u.Role,
		Peer:     u.Peer,
		PeerName: u.PeerName,
		PowerOff: os.Getenv("PURERDMA_PAIR_POWEROFF"),
		Dev:      Dev{Name: u.Device.Name, Driver: "rxe", Link: LinkRoCE, Netdev: u.Device.Netdev, Addr: u.Device.Addr},
	}
	if err == nil && p.PowerOff == "" {
		err = fmt.Errorf("guest %s: PURERDMA_PAIR_POWEROFF is empty", p.Name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ProjectTool returns the path of one of purerdma's own commands in the
// VM image (/opt/purerdma/bin), or in the directory PURERDMA_BIN names
// (make test-native builds them there); it fails the test in the VM and in
// a native run when the command is missing, and skips elsewhere.
func ProjectTool(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(projectBin(), name)
	if _, err := os.Stat(p); err != nil {
		switch {
		case InVM():
			t.Fatalf("%s is not in the VM image: %v", name, err)
		case Native() && os.Getenv("PURERDMA_BIN") != "":
			t.Fatalf("%s is not in PURERDMA_BIN: %v", name, err)
		}
		t.Skipf("%s: not in the VM image: %v", name, err)
	}
	return p
}

package testenv_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestNativeDiscoveryVM describes the VM's devices the way a native run
// (make test-native) describes a host's, from the kernel alone, and
// compares that with what the VM's init says it made: the same names,
// drivers, netdevs, addresses and links.
func TestNativeDiscoveryVM(t *testing.T) {
	if !testenv.InVM() {
		t.Skip("compares with the VM init's own description of its devices")
	}
	want := testenv.Devices(t)
	var names []string
	for _, d := range want {
		names = append(names, d.Name)
	}
	got, err := testenv.FindNative(strings.Join(names, ","))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("native discovery (-VM init +native):\n%s", diff)
	}
	for _, d := range got {
		t.Logf("%s: netdev %s, %s, link %s", d, d.Netdev, d.Addr, d.Link)
	}
}

package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// testPeerDir is where the VM image carries the C test peers: hack/vm
// compiles every test/<name>/testdata/peer.c into testPeerDir/<name>
// when it packs the C tools (-ctools).
const testPeerDir = "/opt/purerdma/test"

// TestPeer returns the path of the C test peer compiled from
// test/<name>/testdata/peer.c. PURERDMA_TEST_PEERS names another
// directory to look in: make test-native builds them into
// .cache/native/peers and names it, unless the host has no librpma. In
// the VM, and in a native run that names the directory, a missing peer
// fails the test, except in a non-amd64 guest, which has none (see
// CTool); otherwise it is a skip.
func TestPeer(t testing.TB, name string) string {
	t.Helper()
	skipForeignC(t)
	dir := os.Getenv("PURERDMA_TEST_PEERS")
	if dir == "" {
		dir = testPeerDir
	}
	p := filepath.Join(dir, name)
	_, err := os.Stat(p)
	switch {
	case err == nil:
		return p
	case InVM() && cToolsPromised():
		t.Fatalf("C test peer %s is not in the VM image: %v", name, err)
	case InVM():
		t.Fatalf("C test peer %s needed, but the VM image was built without C tools (hack/vm test -ctools)", name)
	case Native() && os.Getenv("PURERDMA_TEST_PEERS") != "":
		t.Fatalf("C test peer %s is not in %s, where make test-native built the peers: %v", name, dir, err)
	default:
		t.Skipf("C test peer %s not built: %v (make vm-test builds it, make test-native where the host has librpma)", name, err)
	}
	return ""
}

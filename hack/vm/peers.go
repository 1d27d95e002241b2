package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/purerdma/purerdma/internal/vm/fetch"
)

// Test peers are small C programs that interop tests run against the Go
// packages: every test/<name>/testdata/peer.c, with test/include on the
// include path (in testdata, since go
// build refuses C files in a package that does not use cgo). With -ctools
// they are compiled on the host and packed as /opt/purerdma/test/<name>,
// where testenv.TestPeer finds them.

// peerPackages are what compiling a peer needs besides the C tools'
// packages (which bring librpma-dev): Debian's librpma-dev does not
// depend on libibverbs-dev, whose <infiniband/verbs.h> librpma.h includes.
var peerPackages = []string{"gcc", "libc6-dev", "libibverbs-dev", "librpma-dev"}

// peerDir is where the guest finds the peers (testenv.TestPeer).
const peerDir = "/opt/purerdma/test/"

// hostPeers compiles the test peers for this host into out and names
// them, for make test-native (testenv.TestPeer finds them through
// PURERDMA_TEST_PEERS): the build -ctools packs into the guest.
func hostPeers(env *fetch.Env, out string) error {
	if out == "" {
		return fmt.Errorf("peers: -out is required")
	}
	files, _, err := testPeers(env, runtime.GOARCH, out)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("peers: no test/*/testdata/peer.c (run from the repository's top)")
	}
	for _, host := range files {
		env.Logf("built %s", host)
	}
	return nil
}

// nativePackages are the Debian packages the C side of the tests needs on
// a host (make test-native): the C tools' and the peers', without
// linux-perf, which only make profile runs, in the VM.
func nativePackages() []string {
	var pkgs []string
	for _, p := range append(append([]string(nil), fetch.CToolPackages...), peerPackages...) {
		if p != "linux-perf" && !slices.Contains(pkgs, p) {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs
}

// testPeers compiles the test peers into out and returns them by guest
// path, with the host files of their shared-library closure. The host's
// gcc builds for the host, so another guest architecture gets none.
func testPeers(env *fetch.Env, arch, out string) (files map[string]string, libs []string, err error) {
	sources, _ := filepath.Glob(filepath.Join("test", "*", "testdata", "peer.c"))
	if len(sources) == 0 {
		return nil, nil, nil
	}
	if arch != runtime.GOARCH {
		env.Logf("not building the C test peers for %s on a %s host", arch, runtime.GOARCH)
		return nil, nil, nil
	}
	if err := env.Install(peerPackages...); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, nil, err
	}
	files = map[string]string{}
	var bins []string
	for _, src := range sources {
		name := filepath.Base(filepath.Dir(filepath.Dir(src)))
		bin := filepath.Join(out, name)
		// test/include holds what the peers share (rpmapeer.h).
		cmd := exec.Command("gcc", "-O2", "-Wall", "-I", filepath.Join("test", "include"), "-o", bin, src, "-lrpma", "-libverbs")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return nil, nil, fmt.Errorf("gcc %s: %w\n%s", src, err, strings.TrimSpace(string(msg)))
		}
		files[peerDir+name] = bin
		bins = append(bins, bin)
	}
	// The peers' libraries, without the peers themselves, which go to
	// peerDir rather than to their host paths.
	closure, err := fetch.WithLibraries(bins)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range closure {
		if !strings.HasPrefix(f, out) {
			libs = append(libs, f)
		}
	}
	return files, libs, nil
}

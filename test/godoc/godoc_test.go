package godoc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
)

// public are the packages a user imports.
var public = []string{"uverbs", "cq", "mr", "rdmacm", "rsocket", "rpma"}

// TestNoInternalNames fails on every line of go doc -all of a public
// package that names an internal package or one of its constants.
func TestNoInternalNames(t *testing.T) {
	if testenv.InVM() {
		t.Skip("the VM has no source tree and no go tool")
	}
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed on the host: %v", err)
	}
	for _, p := range public {
		path := "github.com/purerdma/purerdma/" + p
		readSources(t, filepath.Join("..", "..", p))
		out, err := exec.Command(gotool, "doc", "-all", path).CombinedOutput()
		if err != nil {
			t.Errorf("go doc -all %s: %v\n%s", path, err, out)
			continue
		}
		if len(out) == 0 {
			t.Errorf("go doc -all %s printed nothing", path)
		}
		for i, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "internal/") || strings.Contains(line, "abi.") {
				t.Errorf("go doc -all %s, line %d names an internal package: %s", p, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// readSources reads the Go files of the package in dir. The test does not
// need them, but go test caches a result keyed by the files a test opens,
// and would not see the ones go doc reads: this makes an edit of the
// package run the test again.
func readSources(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".go" {
			continue
		}
		if _, err := os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

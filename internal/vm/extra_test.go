package vm

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/vm/fetch"
	"github.com/purerdma/purerdma/internal/vm/plan"
)

// TestAddExtra packs a directory with a host executable and a text file:
// both go under plan.ExtraDir, the executable's libraries (libc at least)
// at their host paths, and the plan says so for init.
func TestAddExtra(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on this host")
	}
	dir := t.TempDir()
	data, err := os.ReadFile(sh)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prog"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not ELF"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !dynamicForHost(filepath.Join(dir, "prog")) {
		t.Skipf("%s is not a dynamic executable for this host", sh)
	}
	if dynamicForHost(filepath.Join(dir, "notes.txt")) {
		t.Error("a text file counts as a dynamic executable")
	}
	im := NewImage(nil, plan.Plan{})
	if err := im.AddExtra(&fetch.Env{Log: io.Discard}, dir); err != nil {
		t.Fatal(err)
	}
	if im.Trees[plan.ExtraDir] != dir || !im.Plan.Extra {
		t.Errorf("trees %v, plan.Extra %v; want %s packed as %s", im.Trees, im.Plan.Extra, dir, plan.ExtraDir)
	}
	if !slices.ContainsFunc(im.HostLibs, func(l string) bool { return strings.Contains(filepath.Base(l), "libc.so") }) {
		t.Errorf("no libc among the packed libraries %v", im.HostLibs)
	}
	for _, l := range im.HostLibs {
		if strings.HasPrefix(l, dir) {
			t.Errorf("%s packed as a host library", l)
		}
	}
	if err := NewImage(nil, plan.Plan{}).AddExtra(&fetch.Env{Log: io.Discard}, filepath.Join(dir, "notes.txt")); err == nil {
		t.Error("a file taken as -extra's directory")
	}
}

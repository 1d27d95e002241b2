package vm

import (
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/purerdma/purerdma/internal/vm/fetch"
	"github.com/purerdma/purerdma/internal/vm/plan"
)

// AddExtra packs the files under the host directory dir as
// plan.ExtraDir (hack/vm -extra): programs built outside the repository
// that a hand run needs in the guest, such as librpma's own C examples
// (cmd/rpma-examples' TestCExamples runs them against the Go ports). The
// shared libraries of the ones that are dynamic executables for this
// host come along at their host paths, as the C tools' do; a file for
// another architecture is packed as it is.
func (im *Image) AddExtra(env *fetch.Env, dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("-extra: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("-extra: %s is not a directory", dir)
	}
	var bins []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && dynamicForHost(p) {
			bins = append(bins, p)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("-extra: %w", err)
	}
	libs, err := fetch.WithLibraries(bins)
	if err != nil {
		return fmt.Errorf("-extra: %w", err)
	}
	abs, _ := filepath.Abs(dir)
	for _, l := range libs {
		if a, _ := filepath.Abs(l); !strings.HasPrefix(a, abs+string(filepath.Separator)) {
			im.HostLibs = append(im.HostLibs, l)
		}
	}
	im.Trees[plan.ExtraDir] = dir
	im.Plan.Extra = true
	env.Logf("packing %s as %s (%d dynamic executables)", dir, plan.ExtraDir, len(bins))
	return nil
}

// dynamicForHost says whether p is an ELF file for the host's machine that
// loads shared libraries, the files ldd can tell about.
func dynamicForHost(p string) bool {
	f, err := elf.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[runtime.GOARCH]
	if f.Machine != machine {
		return false
	}
	libs, err := f.ImportedLibraries()
	return err == nil && len(libs) > 0
}

// AddProgram packs the host file host as guest, with the shared libraries
// it loads at their host paths when it is a dynamic executable for this
// host (a Go program built with cgo): the guest has no libraries of its
// own.
func (im *Image) AddProgram(guest, host string) error {
	im.Files[guest] = host
	if !dynamicForHost(host) {
		return nil
	}
	libs, err := fetch.WithLibraries([]string{host})
	if err != nil {
		return err
	}
	for _, l := range libs {
		if l != host {
			im.HostLibs = append(im.HostLibs, l)
		}
	}
	return nil
}

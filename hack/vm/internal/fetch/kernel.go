package fetch

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/purerdma/purerdma/hack/vm/internal/kmod"
)

// Kernel is an unpacked Debian kernel in the cache.
type Kernel struct {
	Version string // uname -r, e.g. "6.1.0-48-amd64"
	Dir     string // the cache directory of this version
	Vmlinuz string
	Modules string // lib/modules/<version>
	Siw     string // siw.ko built for this kernel
}

// Kernel returns the cached kernel for arch, downloading and building it on
// the first run. The version is the one linux-image-<arch> depends on when
// the cache is first filled; after that the cache answers without apt.
func (e *Env) Kernel(cache, arch string) (*Kernel, error) {
	archDir := filepath.Join(cache, arch)
	current := filepath.Join(archDir, "current")
	if b, err := os.ReadFile(current); err == nil {
		k := layout(archDir, strings.TrimSpace(string(b)))
		if k.complete() {
			e.Logf("kernel %s from the cache", k.Version)
			return k, nil
		}
	}
	version, err := e.kernelVersion(arch)
	if err != nil {
		return nil, err
	}
	k := layout(archDir, version)
	if err := e.unpackKernel(k, arch); err != nil {
		return nil, err
	}
	if arch == "amd64" {
		if err := e.buildSiw(k); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(current, []byte(version+"\n"), 0o644); err != nil {
		return nil, err
	}
	return k, nil
}

func layout(archDir, version string) *Kernel {
	dir := filepath.Join(archDir, version)
	return &Kernel{
		Version: version,
		Dir:     dir,
		Vmlinuz: filepath.Join(dir, "root", "boot", "vmlinuz-"+version),
		Modules: filepath.Join(dir, "root", "lib", "modules", version),
		Siw:     filepath.Join(dir, "siw.ko"),
	}
}

func (k *Kernel) complete() bool {
	need := []string{k.Vmlinuz, k.Modules}
	if strings.HasSuffix(k.Version, "-amd64") {
		need = append(need, k.Siw)
	}
	for _, p := range need {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

// imageDep finds the kernel package in apt-cache's answer; a foreign
// architecture's is qualified with it (linux-image-6.1.0-56-arm64:arm64).
var imageDep = regexp.MustCompile(`Depends: linux-image-([^\s:]+)`)

// kernelVersion asks apt which kernel the linux-image metapackage installs.
func (e *Env) kernelVersion(arch string) (string, error) {
	meta := "linux-image-" + arch
	if arch != hostArch() {
		if err := e.foreignArch(arch); err != nil {
			return "", err
		}
		meta += ":" + arch
	}
	out, err := output("apt-cache", "depends", meta)
	if err != nil || !imageDep.MatchString(out) {
		if err := e.root("", "apt-get", "update"); err != nil {
			return "", err
		}
		e.updated = true
		if out, err = output("apt-cache", "depends", meta); err != nil {
			return "", err
		}
	}
	m := imageDep.FindStringSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("apt-cache depends %s names no kernel:\n%s", meta, out)
	}
	return m[1], nil
}

func (e *Env) unpackKernel(k *Kernel, arch string) error {
	if _, err := os.Stat(k.Vmlinuz); err == nil {
		return nil
	}
	dl := filepath.Join(k.Dir, "deb")
	if err := os.MkdirAll(dl, 0o755); err != nil {
		return err
	}
	pkg := "linux-image-" + k.Version
	if arch != hostArch() {
		pkg += ":" + arch
	}
	e.Logf("downloading %s", pkg)
	if err := e.apt(dl, "download", pkg); err != nil {
		return err
	}
	debs, _ := filepath.Glob(filepath.Join(dl, "linux-image-*.deb"))
	if len(debs) == 0 {
		return fmt.Errorf("apt-get download %s left no .deb in %s", pkg, dl)
	}
	if err := e.run("", "dpkg-deb", "-x", debs[0], filepath.Join(k.Dir, "root")); err != nil {
		return err
	}
	return os.RemoveAll(dl)
}

// buildSiw builds SoftiWARP out of tree: Debian's 6.1 kernel does not
// enable CONFIG_RDMA_SIW, but its source and headers build it in seconds.
func (e *Env) buildSiw(k *Kernel) error {
	if _, err := os.Stat(k.Siw); err == nil {
		return nil
	}
	headers := "linux-headers-" + k.Version
	if err := e.Install(headers, "linux-source-6.1", "make", "xz-utils"); err != nil {
		return err
	}
	srcs, _ := filepath.Glob("/usr/src/linux-source-6.1.tar.xz")
	if len(srcs) == 0 {
		return fmt.Errorf("linux-source-6.1 installed no /usr/src/linux-source-6.1.tar.xz")
	}
	work := filepath.Join(k.Dir, "siw-build")
	os.RemoveAll(work)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	e.Logf("building siw.ko for %s", k.Version)
	if err := e.run(work, "tar", "-xJf", srcs[0], "--wildcards", "*/drivers/infiniband/sw/siw/*"); err != nil {
		return err
	}
	dirs, _ := filepath.Glob(filepath.Join(work, "*", "drivers", "infiniband", "sw", "siw"))
	if len(dirs) != 1 {
		return fmt.Errorf("siw sources not found in %s", work)
	}
	if err := e.run("", "make", "-C", "/usr/src/"+headers, "M="+dirs[0], "CONFIG_RDMA_SIW=m", "modules"); err != nil {
		return err
	}
	built := filepath.Join(dirs[0], "siw.ko")
	if err := sameVermagic(built, k.Modules); err != nil {
		return err
	}
	if err := os.Rename(built, k.Siw); err != nil {
		return err
	}
	return os.RemoveAll(work)
}

// sameVermagic checks that siw.ko was built for the kernel whose modules
// are in dir, since a mismatch only shows as a load failure in the guest.
func sameVermagic(ko, dir string) error {
	idx, err := kmod.Index(dir)
	if err != nil {
		return err
	}
	ref, err := kmod.Read(idx["ib_core"])
	if err != nil {
		return err
	}
	m, err := kmod.Read(ko)
	if err != nil {
		return err
	}
	if m.Vermagic != ref.Vermagic {
		return fmt.Errorf("siw.ko vermagic %q, kernel modules have %q", m.Vermagic, ref.Vermagic)
	}
	return nil
}

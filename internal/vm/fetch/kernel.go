package fetch

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/vm/kmod"
)

// Kernel is an unpacked Debian kernel in the cache.
type Kernel struct {
	Series  string // the series asked for, e.g. "6.12"
	Version string // uname -r, e.g. "6.1.0-48-amd64" or "6.12.117+deb12-amd64"
	Dir     string // the cache directory of this version
	Vmlinuz string
	Modules string // lib/modules/<version> (usr/lib/modules in Debian 13's packages)
	Siw     string // siw.ko built for this kernel; "" when there is none
	NoSiw   string // why Siw is "", for the tests' skip messages
}

// DefaultSeries is the kernel series a guest boots when none is asked
// for: Debian 12's own.
const DefaultSeries = "6.1"

// Kernel returns the cached kernel of a series ("6.1", "6.12") for arch,
// downloading and building it on the first run. The version is the newest
// of the series that apt offers when the cache is first filled (see
// metapackage); after that the cache answers without apt. Each version has
// its own directory, and .cache/vm/<arch>/current-<series> names it.
func (e *Env) Kernel(cache, arch, series string) (*Kernel, error) {
	if series == "" {
		series = DefaultSeries
	}
	archDir := filepath.Join(cache, arch)
	current := filepath.Join(archDir, "current-"+series)
	if k, ok := Cached(cache, arch, series); ok {
		e.Logf("kernel %s from the cache", k.Version)
		return k, nil
	}
	// go test -exec rdmavm runs a package's binaries side by side: the
	// first to find the cache empty fills it, the others wait for it and
	// then find it whole.
	unlock, err := lockDir(archDir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if k, ok := Cached(cache, arch, series); ok {
		e.Logf("kernel %s from the cache", k.Version)
		return k, nil
	}
	if s, ok := privateSeries[series]; ok {
		p, err := e.privateApt(cache, arch, s)
		if err != nil {
			return nil, err
		}
		k, err := e.privateKernel(p, archDir, series)
		if err != nil {
			return nil, err
		}
		return k, os.WriteFile(current, []byte(k.Version+"\n"), 0o644)
	}
	// The version, its image's download and its headers' install are
	// one attempt: stale lists can name a version the mirror has since
	// dropped (apt-get download and install then fail with a 404), and
	// after the refresh the version is resolved again, not fetched again.
	var k *Kernel
	err = e.WithLists("getting the "+series+" kernel for "+arch, func() error {
		version, err := e.kernelVersion(arch, series)
		if err != nil {
			return err
		}
		k = layout(archDir, series, version)
		if err := e.unpackKernel(k, arch); err != nil {
			return err
		}
		if k.Siw != "" {
			return e.buildSiw(k)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(current, []byte(k.Version+"\n"), 0o644); err != nil {
		return nil, err
	}
	return k, nil
}

// lockDir takes an exclusive lock on dir (created if need be) that other
// processes filling the same cache wait for; the returned function
// releases it.
func lockDir(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking the cache %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

// Cached returns the series' kernel when the cache holds it whole, without
// apt: what a host that has no apt can still boot.
func Cached(cache, arch, series string) (*Kernel, bool) {
	b, err := os.ReadFile(filepath.Join(cache, arch, "current-"+series))
	if err != nil {
		return nil, false
	}
	k := layout(filepath.Join(cache, arch), series, strings.TrimSpace(string(b)))
	return k, k.complete()
}

func layout(archDir, series, version string) *Kernel {
	dir := filepath.Join(archDir, version)
	k := &Kernel{
		Series:  series,
		Version: version,
		Dir:     dir,
		Vmlinuz: filepath.Join(dir, "root", "boot", "vmlinuz-"+version),
		Modules: filepath.Join(dir, "root", "lib", "modules", version),
		Siw:     filepath.Join(dir, "siw.ko"),
	}
	// Debian 13's packages ship their modules under /usr (merged /usr),
	// and from 7.3 (linux-binary) the kernel beside them.
	if usr := filepath.Join(dir, "root", "usr", "lib", "modules", version); exists(usr) {
		k.Modules = usr
		if v := filepath.Join(usr, "vmlinuz"); !exists(k.Vmlinuz) && exists(v) {
			k.Vmlinuz = v
		}
	}
	switch {
	case !strings.HasSuffix(version, "-amd64"):
		k.Siw, k.NoSiw = "", "no siw in non-amd64 guests: the harness builds siw.ko for amd64 only"
	case privateSeries[series].noSiw != "":
		k.Siw, k.NoSiw = "", privateSeries[series].noSiw
	}
	return k
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func (k *Kernel) complete() bool {
	need := []string{k.Vmlinuz, k.Modules}
	if k.Siw != "" {
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

// metapackage names the Debian package that always depends on the newest
// kernel of a series: Debian 12's own series is linux-image-<arch>, a newer
// one from its security and backports suites is linux-image-<series>-<arch>
// (linux-image-6.12-amd64 depends on linux-image-6.12.117+deb12-amd64).
// Resolving through it, never a hard-coded patch version, follows the
// security updates.
func metapackage(arch, series string) string {
	if series == DefaultSeries {
		return "linux-image-" + arch
	}
	return "linux-image-" + series + "-" + arch
}

// inSeries reports whether a kernel version (uname -r) belongs to series:
// "6.1.0-56-amd64" is 6.1, "6.12.117+deb12-amd64" is 6.12, and neither is
// the other.
func inSeries(version, series string) bool {
	rest, ok := strings.CutPrefix(version, series)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '-' || rest[0] == '+')
}

// kernelVersion asks apt which kernel the series' metapackage installs,
// from the lists as they are: Kernel refreshes them when this fails.
func (e *Env) kernelVersion(arch, series string) (string, error) {
	meta := metapackage(arch, series)
	if arch != hostArch() {
		if err := e.foreignArch(arch); err != nil {
			return "", err
		}
		meta += ":" + arch
	}
	out, err := output("apt-cache", "depends", meta)
	if err != nil {
		return "", err
	}
	m := imageDep.FindStringSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("apt-cache depends %s names no kernel:\n%s", meta, out)
	}
	if !inSeries(m[1], series) {
		return "", fmt.Errorf("%s depends on %s, which is not a %s kernel", meta, m[1], series)
	}
	return m[1], nil
}

func (e *Env) unpackKernel(k *Kernel, arch string) error {
	pkg := "linux-image-" + k.Version
	if arch != hostArch() {
		pkg += ":" + arch
	}
	return e.unpackWith(k, []string{pkg}, nil)
}

// unpackWith downloads the kernel's packages pkgs (the image, and from
// 7.3 on the packages it is split into) with apt-get and aptOptions (a
// private suite's) and unpacks them into the cache.
func (e *Env) unpackWith(k *Kernel, pkgs []string, aptOptions []string) error {
	if _, err := os.Stat(k.Vmlinuz); err == nil {
		return nil
	}
	// xz decompresses 6.12's .ko.xz modules when an image is packed.
	if err := e.Install("xz-utils"); err != nil {
		return err
	}
	// What a failed attempt left is not this version's .deb.
	dl := filepath.Join(k.Dir, "deb")
	os.RemoveAll(dl)
	if err := os.MkdirAll(dl, 0o755); err != nil {
		return err
	}
	e.Logf("downloading %s", strings.Join(pkgs, " "))
	if err := e.root(dl, "apt-get", append(slices.Clone(aptOptions), append([]string{"download"}, pkgs...)...)...); err != nil {
		return err
	}
	debs, _ := filepath.Glob(filepath.Join(dl, "*.deb"))
	if len(debs) != len(pkgs) {
		return fmt.Errorf("apt-get download %s left %d .deb files in %s", strings.Join(pkgs, " "), len(debs), dl)
	}
	for _, deb := range debs {
		if err := e.run("", "dpkg-deb", "-x", deb, filepath.Join(k.Dir, "root")); err != nil {
			return err
		}
	}
	return os.RemoveAll(dl)
}

// buildSiw builds SoftiWARP out of tree: no Debian kernel enables
// CONFIG_RDMA_SIW, but the series' source package and the version's headers
// build it in seconds.
func (e *Env) buildSiw(k *Kernel) error {
	if _, err := os.Stat(k.Siw); err == nil {
		return nil
	}
	headers := "linux-headers-" + k.Version
	source := "linux-source-" + k.Series
	if err := e.Install(headers, source, "make", "xz-utils"); err != nil {
		return err
	}
	tarball := "/usr/src/" + source + ".tar.xz"
	if _, err := os.Stat(tarball); err != nil {
		return fmt.Errorf("%s installed no %s", source, tarball)
	}
	work := filepath.Join(k.Dir, "siw-build")
	os.RemoveAll(work)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	e.Logf("building siw.ko for %s", k.Version)
	if err := e.run(work, "tar", "-xJf", tarball, "--wildcards", "*/drivers/infiniband/sw/siw/*"); err != nil {
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

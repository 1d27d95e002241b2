package fetch

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A kernel series newer than Debian 12's own lists comes from a suite the
// host's apt does not know: 6.18 LTS from trixie-backports. The harness
// reads that suite through an apt configuration of its own (sources,
// lists and downloads under the cache), never by changing the machine's
// apt sources: only the kernel package is downloaded and unpacked for the
// guest, nothing from the suite is installed on the host.

// privateSeries are the series fetched from a private suite, and why
// they have no siw.ko.
var privateSeries = map[string]privateSuite{
	"6.18": {
		source: "http://deb.debian.org/debian trixie-backports main",
		// Debian 13's kernels are built with GCC 14 (their CFLAGS hold
		// -fmin-function-alignment, GCC 14 only) and their build tools
		// (linux-kbuild) against trixie's libc: Debian 12 has neither,
		// so an out-of-tree siw.ko would be built with another compiler
		// than the kernel, which kbuild refuses to vouch for.
		noSiw: "no siw on 6.18: Debian's 6.18 (trixie-backports) is built with GCC 14, which Debian 12 lacks, so the harness builds no siw.ko for it",
		image: `^linux-image-(6\.18\.\d+\+deb13-%s)$`,
	},
	// The canary (make test-canary): the newest 7.x, whose image package
	// is split from 7.3 on into linux-binary (the kernel) and
	// linux-modules, which the image only depends on.
	"7": {
		source: "http://deb.debian.org/debian trixie-backports main",
		noSiw:  "no siw on 7.x: Debian's 7.x (trixie-backports) is built with GCC 14, which Debian 12 lacks, so the harness builds no siw.ko for it",
		image:  `^linux-image-(7\.\d+\.\d+\+deb13-%s)$`,
	},
}

// privateSuite is where a series' kernel comes from.
type privateSuite struct {
	source string // the one-line sources.list entry, without "deb"
	noSiw  string // why the harness builds no siw.ko for it
	image  string // the image package's pattern, %s the architecture: group 1 the version (uname -r)
}

// privateApt is apt pointed at one suite, with its state under dir.
type privateApt struct {
	dir, arch string
	suite     privateSuite
}

func (e *Env) privateApt(cache, arch string, s privateSuite) (*privateApt, error) {
	dir, err := filepath.Abs(filepath.Join(cache, "apt", arch))
	if err != nil {
		return nil, err
	}
	p := &privateApt{dir: dir, arch: arch, suite: s}
	for _, d := range []string{"lists/partial", "archives/partial", "cache", "no-parts"} {
		if err := os.MkdirAll(filepath.Join(p.dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	line := "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] " + s.source + "\n"
	if err := os.WriteFile(filepath.Join(p.dir, "sources.list"), []byte(line), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(p.dir, "status"), nil, 0o644); err != nil {
		return nil, err
	}
	return p, nil
}

// options make apt read and write only p's files, for p's architecture.
func (p *privateApt) options() []string {
	var out []string
	for _, o := range []string{
		"Dir::Etc::SourceList=" + filepath.Join(p.dir, "sources.list"),
		"Dir::Etc::SourceParts=" + filepath.Join(p.dir, "no-parts"),
		"Dir::State::Lists=" + filepath.Join(p.dir, "lists"),
		"Dir::State::status=" + filepath.Join(p.dir, "status"),
		"Dir::Cache=" + filepath.Join(p.dir, "cache"),
		"Dir::Cache::Archives=" + filepath.Join(p.dir, "archives"),
		"APT::Architecture=" + p.arch,
		"APT::Architectures::=" + p.arch,
		// The downloads land in the cache, which apt's _apt user may
		// not be able to write.
		"APT::Sandbox::User=root",
	} {
		out = append(out, "-o", o)
	}
	return out
}

func (p *privateApt) update(e *Env) error {
	e.Logf("reading %s through a private apt configuration (%s)", p.suite.source, p.dir)
	return e.root("", "apt-get", append(p.options(), "update")...)
}

// hasLists reports whether an update has fetched p's package lists.
func (p *privateApt) hasLists() bool {
	m, _ := filepath.Glob(filepath.Join(p.dir, "lists", "*_Packages*"))
	return len(m) > 0
}

// newest returns the newest kernel version (uname -r) of the suite's
// series for p's architecture.
func (p *privateApt) newest() (string, error) {
	out, err := output("apt-cache", append(p.options(), "pkgnames", "linux-image-")...)
	if err != nil {
		return "", err
	}
	return newestImage(out, regexp.MustCompile(fmt.Sprintf(p.suite.image, regexp.QuoteMeta(p.arch))))
}

// newestImage picks from package names the image of the highest version
// that pattern matches, comparing the version's numbers in turn.
func newestImage(names string, pattern *regexp.Regexp) (string, error) {
	best, bestKey := "", []int(nil)
	for _, name := range strings.Fields(names) {
		m := pattern.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		if key := versionKey(m[1]); best == "" || slices.Compare(key, bestKey) > 0 {
			best, bestKey = m[1], key
		}
	}
	if best == "" {
		return "", fmt.Errorf("no package matches %s", pattern)
	}
	return best, nil
}

// versionKey is the numbers of a version before its "+": 6.18.15+deb13
// is [6 18 15].
func versionKey(v string) []int {
	v, _, _ = strings.Cut(v, "+")
	var key []int
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r < '0' || r > '9' }) {
		n, _ := strconv.Atoi(f)
		key = append(key, n)
	}
	return key
}

// parts are the packages that hold the kernel of image: the image itself
// and, from 7.3 on, the linux-binary and linux-modules packages of its
// version, which the image package depends on and which hold the files.
func (p *privateApt) parts(image, version string) ([]string, error) {
	out, err := output("apt-cache", append(p.options(), "show", "--no-all-versions", image)...)
	if err != nil {
		return nil, err
	}
	pkgs := []string{image}
	for _, part := range []string{"linux-binary-" + version, "linux-modules-" + version} {
		if regexp.MustCompile(`(?m)^Depends:.*\b` + regexp.QuoteMeta(part) + `\b`).MatchString(out) {
			pkgs = append(pkgs, part)
		}
	}
	return pkgs, nil
}

// privateKernel resolves, downloads and unpacks the series' newest kernel
// through p, refreshing p's lists first when it has none and once more
// when the attempt fails (a version the lists name that the mirror has
// dropped).
func (e *Env) privateKernel(p *privateApt, archDir, series string) (*Kernel, error) {
	if !p.hasLists() {
		if err := p.update(e); err != nil {
			return nil, err
		}
	}
	attempt := func() (*Kernel, error) {
		version, err := p.newest()
		if err != nil {
			return nil, err
		}
		k := layout(archDir, series, version)
		pkgs, err := p.parts("linux-image-"+version, version)
		if err != nil {
			return nil, err
		}
		if err := e.unpackWith(k, pkgs, p.options()); err != nil {
			return nil, err
		}
		if k = layout(archDir, series, version); !k.complete() {
			return nil, fmt.Errorf("%s unpacked no kernel image and modules where the harness looks (%s, %s)", strings.Join(pkgs, " "), k.Vmlinuz, k.Modules)
		}
		return k, nil
	}
	k, err := attempt()
	if err != nil {
		e.Logf("getting the %s kernel failed (%v); refreshing the private lists and trying again", series, err)
		if uerr := p.update(e); uerr != nil {
			return nil, fmt.Errorf("%w (and apt-get update: %v)", err, uerr)
		}
		k, err = attempt()
	}
	return k, err
}

// Package fetch prepares what the test VM boots: QEMU, Debian's kernel and
// its modules, an out-of-tree siw.ko, and the C reference tools. Everything
// downloaded or built is cached, keyed by kernel version, so that a second
// run needs no network.
//
// Every use of apt in the repository goes through this file: the harness's
// own (Install, the kernel's resolution and download) and the shell
// scripts', which call `go run ./hack/vm apt install` (see Env.Install and
// Env.WithLists).
package fetch

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Env runs the host commands of the set-up and says what it does.
type Env struct {
	Log io.Writer
	// refreshes counts the apt-get updates this process ran: one at
	// most, or two when foreignArch had to add an architecture after
	// the first.
	refreshes int
	// updateErr is the failure of the last apt-get update, named when
	// what it was run for fails again (see refresh).
	updateErr error
	// testRefresh, in tests, stands in for apt-get update.
	testRefresh func()
}

func (e *Env) Logf(format string, args ...any) { fmt.Fprintf(e.Log, "vm: "+format+"\n", args...) }

// run runs a command with its output on the log.
func (e *Env) run(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = e.Log, e.Log
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// output runs a command and returns its standard output.
func output(name string, args ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// root runs a command as root, through sudo when we are not root.
func (e *Env) root(dir, name string, args ...string) error {
	if os.Geteuid() != 0 {
		args = append([]string{name}, args...)
		name = "sudo"
	}
	return e.run(dir, name, args...)
}

// listStep is what WithLists does after a failed attempt.
type listStep int

const (
	// giveUp: the lists were refreshed before the attempt began, so it
	// already saw the newest; its error is the answer.
	giveUp listStep = iota
	// refreshFirst: the lists were not refreshed in this process: they
	// may be stale (a package they do not know yet, a version the
	// mirror no longer has), so refresh them and try again.
	refreshFirst
	// tryAgain: the attempt itself refreshed the lists (an Install in
	// it), after it had resolved something from the old ones: try it
	// again from the start, without a second refresh.
	tryAgain
)

// nextStep decides after a failed attempt, from the number of refreshes
// of the process before and after it.
func nextStep(before, after int) listStep {
	switch {
	case after > before:
		return tryAgain
	case after == 0:
		return refreshFirst
	}
	return giveUp
}

// WithLists runs attempt, which reads apt's package lists or acts on
// them: when it fails, the lists are refreshed once (once per process,
// not per attempt) and attempt runs again from the start, so that
// whatever it had resolved from stale lists, a kernel version or the
// .deb it names, is resolved again from the fresh ones. A warm machine,
// whose attempts succeed, never waits for apt-get update.
func (e *Env) WithLists(what string, attempt func() error) error {
	for {
		before := e.refreshes
		err := attempt()
		if err == nil {
			return nil
		}
		switch nextStep(before, e.refreshes) {
		case refreshFirst:
			e.Logf("%s failed (%v); refreshing the package lists and trying again", what, err)
			e.refresh()
		case tryAgain:
			e.Logf("%s failed (%v) after the package lists were refreshed; trying again", what, err)
		default:
			if e.updateErr != nil {
				return fmt.Errorf("%w (and apt-get update had failed: %v)", err, e.updateErr)
			}
			return err
		}
	}
}

// refresh runs apt-get update. Its exit status is logged, not returned:
// apt-get update refreshes every source it can and reports the others
// apart, and which it did is not in its status. On a Debian 12 host
// (apt 2.6), a source it cannot reach (a third-party repository whose
// host does not resolve, such as packages.cloud.google.com behind a
// firewall) is a warning ("W: Failed to fetch ... Could not resolve"),
// and it exits 0; a source that answers with an error (a 404 for a
// suite, a Release file it cannot verify) makes it exit 100 -- in both
// cases after it refreshed Debian's own lists. So a failed update does
// not end the run: the attempt it was run for is what says whether the
// lists now have what we need, and if it fails again, its error names
// the update's (see WithLists).
func (e *Env) refresh() {
	if e.testRefresh != nil {
		e.testRefresh()
		return
	}
	e.refreshes++
	e.updateErr = e.root("", "apt-get", "update")
	if e.updateErr != nil {
		e.Logf("apt-get update reported an error (%v); carrying on with the lists it did refresh", e.updateErr)
	}
}

// installed reports whether a Debian package is installed.
func installed(pkg string) bool {
	out, err := output("dpkg-query", "-W", "-f=${Status}", pkg)
	return err == nil && strings.HasSuffix(strings.TrimSpace(out), " installed")
}

// Install installs the packages that are not installed yet, with
// apt-get install, refreshing the lists once if that fails (WithLists):
// an unknown package, or a version the stale lists name and the mirror
// has dropped. It is what `go run ./hack/vm apt install` runs for the
// shell scripts.
func (e *Env) Install(pkgs ...string) error {
	var missing []string
	for _, p := range pkgs {
		if !installed(p) {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	e.Logf("installing %s", strings.Join(missing, " "))
	args := append([]string{"apt-get", "install", "-y", "--no-install-recommends"}, missing...)
	return e.WithLists("apt-get install", func() error { return e.root("", args[0], args[1:]...) })
}

// Candidate is the version apt would install of pkg, "" when its lists
// offer none; it reads the lists as they are.
func Candidate(pkg string) (string, error) {
	out, err := output("apt-cache", "policy", pkg)
	if err != nil {
		return "", err
	}
	return candidateOf(out), nil
}

// candidateOf reads the candidate version in apt-cache policy's answer.
func candidateOf(policy string) string {
	for _, line := range strings.Split(policy, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Candidate:"); ok {
			if v = strings.TrimSpace(v); v != "(none)" {
				return v
			}
		}
	}
	return ""
}

// EnsureQEMU installs QEMU when its binary for arch is missing.
func (e *Env) EnsureQEMU(arch string) (string, error) {
	bin, pkg := "qemu-system-x86_64", "qemu-system-x86"
	if arch == "arm64" {
		bin, pkg = "qemu-system-aarch64", "qemu-system-arm"
	}
	if p, err := exec.LookPath(bin); err == nil {
		return p, nil
	}
	if err := e.Install(pkg); err != nil {
		return "", err
	}
	return exec.LookPath(bin)
}

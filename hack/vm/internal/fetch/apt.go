// Package fetch prepares what the test VM boots: QEMU, Debian's kernel and
// its modules, an out-of-tree siw.ko, and the C reference tools. Everything
// downloaded or built is cached, keyed by kernel version, so that a second
// run needs no network.
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
	// updated is set once apt-get update ran in this process.
	updated bool
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

// apt runs apt-get; when it fails, it refreshes the package lists once and
// tries again, so a warm machine never waits for apt-get update.
func (e *Env) apt(dir string, args ...string) error {
	err := e.root(dir, "apt-get", args...)
	if err == nil || e.updated {
		return err
	}
	e.Logf("apt-get %s failed; updating the package lists and retrying", args[0])
	if err := e.root("", "apt-get", "update"); err != nil {
		return err
	}
	e.updated = true
	return e.root(dir, "apt-get", args...)
}

// installed reports whether a Debian package is installed.
func installed(pkg string) bool {
	out, err := output("dpkg-query", "-W", "-f=${Status}", pkg)
	return err == nil && strings.HasSuffix(strings.TrimSpace(out), " installed")
}

// Install installs the packages that are not installed yet.
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
	return e.apt("", append([]string{"install", "-y", "--no-install-recommends"}, missing...)...)
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

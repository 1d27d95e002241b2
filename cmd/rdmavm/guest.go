//go:build linux

package main

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/purerdma/purerdma/internal/vm"
	"github.com/purerdma/purerdma/internal/vm/fetch"
	"github.com/purerdma/purerdma/internal/vm/plan"
)

// progDir is where the program runs from in the guest. Not its host path:
// go test's binaries live under /tmp, and so may the working directory.
const progDir = "/opt/rdmavm"

// maxTree bounds the working directory rdmavm copies into the guest's
// memory.
const maxTree = 256 << 20

// runGuest boots the guest (or the pair), runs cmd there and returns its
// exit status.
func (c config) runGuest(cmd []string, stdout, stderr io.Writer) (int, error) {
	var setup bytes.Buffer // shown when the guest fails before the program ends
	logw := io.Writer(&setup)
	if c.verbose {
		logw = io.MultiWriter(&setup, stderr)
	}
	start := time.Now()
	env := &fetch.Env{Log: logw}
	prog := hostProgram(cmd[0])
	arch := c.arch
	if arch == "" {
		arch = programArch(prog)
	}
	k, err := c.kernelFor(env, arch)
	if err != nil {
		return 0, err
	}
	drivers, err := c.drivers(env, arch, k)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(c.cache, 0o755); err != nil {
		return 0, err
	}
	work, err := os.MkdirTemp(c.cache, "run-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(work)
	im, err := c.image(env, k, arch, drivers, cmd, prog)
	if err != nil {
		return 0, err
	}
	initrd := filepath.Join(work, "initrd.cpio")
	if err := im.Write(initrd); err != nil {
		return 0, err
	}
	con := newConsole(stdout, stderr, c.verbose)
	// A test binary's own timeout (go test passes -test.timeout=10m0s)
	// ends first, with its goroutine dump, rather than the guest's limit.
	if d := testTimeout(cmd[1:]); d > 0 && c.timeout < d+2*time.Minute {
		c.timeout = d + 2*time.Minute
	}
	booted := time.Now()
	defer func() {
		if !con.started.IsZero() && !con.ended.IsZero() {
			env.Logf("set-up %v (kernel, image %s), boot to the program's start %v, the program %v, power-off %v",
				booted.Sub(start).Round(time.Millisecond), vm.SizeOf(initrd), con.started.Sub(booted).Round(time.Millisecond),
				con.ended.Sub(con.started).Round(time.Millisecond), time.Since(con.ended).Round(time.Millisecond))
		}
	}()
	if c.pair {
		err = vm.BootPair(env, arch, k, initrd, c.timeout, con)
	} else {
		_, err = vm.Boot(context.Background(), arch, k.Vmlinuz, initrd, c.timeout, con, false)
		if errors.Is(err, vm.ErrKernelDied) {
			// The emulator, not the program: nothing of it ran.
			env.Logf("%v; booting again, once", err)
			_, err = vm.Boot(context.Background(), arch, k.Vmlinuz, initrd, c.timeout, con, false)
		}
	}
	con.flush()
	guests := 1
	if c.pair {
		guests = len(vm.PairWire.Guests)
	}
	if code, ok := con.exitCode(guests); ok && (err == nil || c.pair) {
		return code, nil
	}
	if !c.verbose {
		stderr.Write(setup.Bytes())
		con.dumpSetup(stderr)
	}
	if err == nil {
		err = fmt.Errorf("the guest's set-up failed (its console is above)")
	}
	return 0, err
}

// image assembles the initramfs: rdmavm itself as init, the program, the
// working directory at its host path, the C tools if asked for.
func (c config) image(env *fetch.Env, k *fetch.Kernel, arch string, drivers []string, cmd []string, prog string) (*vm.Image, error) {
	im := vm.NewImage(k, plan.Plan{Mode: plan.ModeTest, Arch: arch, CTools: c.ctools, Drivers: drivers, Env: hostEnv()})
	initBin, err := initFor(arch)
	if err != nil {
		return nil, err
	}
	if err := im.AddProgram("/init", initBin); err != nil {
		return nil, err
	}
	path := cmd[0]
	if prog != "" {
		path = progDir + "/" + filepath.Base(prog)
		if err := im.AddProgram(path, prog); err != nil {
			return nil, err
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if err := addTree(im, wd); err != nil {
		return nil, err
	}
	im.Plan.Steps = []plan.Step{{Name: filepath.Base(cmd[0]), Path: path, Args: cmd[1:], Dir: wd}}
	if c.ctools {
		if arch != runtime.GOARCH {
			return nil, fmt.Errorf("-ctools: the C tools are this host's %s programs; they run in %s guests only", runtime.GOARCH, runtime.GOARCH)
		}
		files, err := env.CToolFiles()
		if err != nil {
			return nil, fmt.Errorf("-ctools: %w", err)
		}
		im.HostLibs = append(im.HostLibs, files...)
	}
	if c.pair {
		im.NICModules = vm.PairModules
		im.Plan.Wire = &vm.PairWire
	}
	return im, nil
}

// initFor is the guest's /init: rdmavm itself, or for a guest of another
// architecture the rdmavm that go install put in GOPATH/bin/linux_<arch>.
func initFor(arch string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	if programArch(self) == arch {
		return self, nil
	}
	gopath := os.Getenv("GOPATH")
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		gopath = strings.TrimSpace(string(out))
	}
	if gopath == "" {
		home, _ := os.UserHomeDir()
		gopath = filepath.Join(home, "go")
	}
	other := filepath.Join(strings.Split(gopath, string(os.PathListSeparator))[0], "bin", "linux_"+arch, "rdmavm")
	if programArch(other) == arch && exists(other) {
		return other, nil
	}
	return "", fmt.Errorf("an %s guest needs rdmavm built for %s, its init: GOARCH=%s go install github.com/purerdma/purerdma/cmd/rdmavm@latest (rdmavm looks for it at %s)", arch, arch, arch, other)
}

// kernelFor installs QEMU if it can and returns the kernel given by path,
// or the series' newest from the cache or through apt.
func (c config) kernelFor(env *fetch.Env, arch string) (*fetch.Kernel, error) {
	_, aptErr := exec.LookPath("apt-get")
	qemu := map[string]string{"amd64": "qemu-system-x86_64", "arm64": "qemu-system-aarch64"}[arch]
	if _, err := exec.LookPath(qemu); err != nil {
		if aptErr != nil {
			return nil, fmt.Errorf("%s guests need %s, which is not on PATH, and this host has no apt-get to install it: install QEMU with the system's package manager", arch, qemu)
		}
		if _, err := env.EnsureQEMU(arch); err != nil {
			return nil, fmt.Errorf("installing QEMU for %s guests: %w (install it by hand: apt-get install qemu-system-x86 or qemu-system-arm)", arch, err)
		}
	}
	if c.vmlinuz != "" {
		return &fetch.Kernel{Version: filepath.Base(c.modules), Vmlinuz: c.vmlinuz, Modules: c.modules, Siw: c.siw}, nil
	}
	if aptErr != nil {
		if k, ok := fetch.Cached(c.cache, arch, c.kernel); ok {
			return k, nil
		}
		return nil, fmt.Errorf("this host has no apt-get to fetch Debian's kernel %s: pass -vmlinuz and -modules (lib/modules/<version>) of a kernel with rdma_rxe, and -siw with a siw.ko built for it", c.kernel)
	}
	return env.Kernel(c.cache, arch, c.kernel)
}

// drivers are the device types the guest creates: what -devices asks
// for, less siw where the guest cannot have it.
func (c config) drivers(env *fetch.Env, arch string, k *fetch.Kernel) ([]string, error) {
	var out []string
	for _, d := range strings.Split(c.devices, ",") {
		switch d = strings.TrimSpace(d); {
		case d != "rxe" && d != "siw":
			return nil, usageError{fmt.Sprintf("-devices: %q is not rxe or siw", d)}
		case d == "siw" && arch != "amd64":
			env.Logf("no siw0 in %s guests: siw.ko is built for amd64 only", arch)
		case d == "siw" && k.NoSiw != "":
			env.Logf("%s", k.NoSiw)
		case d == "siw" && !exists(k.Siw):
			env.Logf("no siw0: no siw.ko for kernel %s (-siw)", k.Version)
		default:
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-devices %s: none of them can run in this %s guest", c.devices, arch)
	}
	return out, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return p != "" && err == nil
}

// hostProgram is the host file cmd names (a path, or a name on PATH), or
// "" when the host has none: the guest then looks the name up itself.
func hostProgram(name string) string {
	if !strings.Contains(name, "/") {
		p, err := exec.LookPath(name)
		if err != nil {
			return ""
		}
		name = p
	}
	abs, err := filepath.Abs(name)
	if err != nil || !exists(abs) {
		return ""
	}
	return abs
}

// programArch is the architecture of the ELF program at path, or the
// host's.
func programArch(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64"
	case elf.EM_AARCH64:
		return "arm64"
	}
	return runtime.GOARCH
}

// hostEnv is the host's environment for the program, less what names the
// host's own paths and terminal: the guest sets those (and PURERDMA_*).
func hostEnv() map[string]string {
	drop := []string{"PATH", "HOME", "TMPDIR", "PWD", "OLDPWD", "SHELL", "TERM", "GOCOVERDIR"}
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if slices.Contains(drop, k) || strings.HasPrefix(k, "PURERDMA_") || strings.HasPrefix(k, "LD_") {
			continue
		}
		env[k] = v
	}
	return env
}

// addTree packs the working directory at its own path, as go test runs a
// test binary in its package's directory: testdata and any other file
// the test reads by a relative path. Hidden directories (.git) stay out.
func addTree(im *vm.Image, dir string) error {
	var total int64
	im.Dirs = append(im.Dirs, dir)
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if total += info.Size(); total > maxTree {
			return fmt.Errorf("the working directory %s holds more than %d MiB: run from a smaller one", dir, maxTree>>20)
		}
		im.Files[p] = p
		return nil
	})
}

// testTimeout is the -test.timeout among a test binary's arguments, 0 when
// there is none (or it is 0, no limit).
func testTimeout(args []string) time.Duration {
	for i, a := range args {
		v, ok := strings.CutPrefix(a, "-test.timeout=")
		if !ok && a == "-test.timeout" && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if d, err := time.ParseDuration(v); ok && err == nil {
			return d
		}
	}
	return 0
}

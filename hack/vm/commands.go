package main

import (
	"context"
	"errors"
	"fmt"
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

// firstKernelOnly are the packages a test over several kernels runs on
// the first only: hack/benchcmp's VM tests check that the benchmark
// harness runs and reports (minutes of rperf and perftest under TCG), not
// what a kernel does.
var firstKernelOnly = map[string]bool{module + "/hack/benchcmp": true}

// test builds the integration test binaries and runs them in the guest,
// or in one guest per kernel series when -kernel lists several
// ("6.1,6.12,6.18"): the binaries are the same for every kernel, so they
// are built once.
func test(env *fetch.Env, o options, args []string) error {
	patterns, testFlags := splitArgs(args)
	pkgs, err := integrationPackages(patterns)
	if err != nil {
		return err
	}
	if len(pkgs) == 0 {
		return fmt.Errorf("no integration test packages in %v", patterns)
	}
	flags := guestTestFlags(testFlags, o.timeout)
	fill := func(im *vm.Image, b *builder) error { return addTests(im, b, pkgs, flags) }
	kernels := strings.Split(o.kernel, ",")
	if len(kernels) == 1 {
		return runGuest(env, o, plan.ModeTest, fill)
	}
	// The later kernels leave out the packages that test the harness
	// rather than the library: the test binaries are built once for
	// all, and only the steps differ.
	later := slices.DeleteFunc(slices.Clone(pkgs), func(p testPackage) bool { return firstKernelOnly[p.ImportPath] })
	if err := os.MkdirAll(o.cache, 0o755); err != nil {
		return err
	}
	shared, err := os.MkdirTemp(o.cache, "build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(shared)
	o.shared = &builder{arch: o.arch, out: shared, race: o.race}
	var failed, reports []string
	for i, k := range kernels {
		o.kernel = k
		if i == 1 && len(later) < len(pkgs) {
			env.Logf("on %s: the packages but %d that test the harness, not the library (they ran on %s)", strings.Join(kernels[1:], ", "), len(pkgs)-len(later), kernels[0])
			fill = func(im *vm.Image, b *builder) error { return addTests(im, b, later, flags) }
		}
		if err := runGuest(env, o, plan.ModeTest, fill); err != nil {
			env.Logf("kernel %s: %v", k, err)
			failed = append(failed, k)
			if gf, ok := err.(*guestFailed); ok {
				reports = append(reports, gf.report)
			}
		}
	}
	if len(failed) > 0 {
		// Again at the end, where a log cut to its tail still shows it.
		fmt.Fprint(o.consoleOut(), strings.Join(reports, ""))
		return fmt.Errorf("the %s guest failed on %s", o.arch, strings.Join(failed, ", "))
	}
	return nil
}

// addTests builds the packages' test binaries and packs them, each as a
// step run with flags.
func addTests(im *vm.Image, b *builder, pkgs []testPackage, flags []string) error {
	if err := b.tests(pkgs); err != nil {
		return err
	}
	if b.race {
		var bins []string
		for _, p := range pkgs {
			bins = append(bins, b.testBinary(p))
		}
		libs, err := fetch.WithLibraries(bins)
		if err != nil {
			return err
		}
		for _, l := range libs {
			if !slices.Contains(bins, l) {
				im.HostLibs = append(im.HostLibs, l)
			}
		}
	}
	for _, p := range pkgs {
		dir := "/tests/" + p.Name
		im.Files[dir+"/"+p.Name+".test"] = b.testBinary(p)
		if st, err := os.Stat(filepath.Join(p.Dir, "testdata")); err == nil && st.IsDir() {
			im.Trees[dir+"/testdata"] = filepath.Join(p.Dir, "testdata")
		}
		im.Plan.Steps = append(im.Plan.Steps, plan.Step{Name: p.Name, Path: dir + "/" + p.Name + ".test", Args: flags, Dir: dir})
	}
	return nil
}

// demo boots the guest, shows its RDMA devices and runs an rpma server
// and client on each (librpma's flush-to-persistent example in Go).
func demo(env *fetch.Env, o options) error {
	return runGuest(env, o, plan.ModeDemo, func(im *vm.Image, b *builder) error {
		steps := []plan.Step{
			{Name: "rdma link show", Path: "/opt/purerdma/bin/rdma", Args: []string{"link", "show"}},
			{Name: "ibv_devices (Go)", Path: "/opt/purerdma/bin/ibv_devices"},
			{Name: "rpma server and client: 05-flush-to-persistent", Path: "/opt/purerdma/bin/rpma-examples", Args: []string{"demo"}},
		}
		im.Plan.Steps = steps
		return nil
	})
}

// shellTools are host programs packed for the debugging shell.
var shellTools = []string{"bash", "ls", "cat", "dmesg", "ps", "ip", "mount", "grep", "less"}

// shell boots the guest with bash on the console.
func shell(env *fetch.Env, o options) error {
	var files []string
	for _, t := range shellTools {
		if p, err := exec.LookPath(t); err == nil {
			files = append(files, p)
		}
	}
	libs, err := fetch.WithLibraries(files)
	if err != nil {
		return err
	}
	return runGuest(env, o, plan.ModeShell, func(im *vm.Image, b *builder) error {
		im.HostLibs = append(im.HostLibs, libs...)
		im.Plan.Shell = "/bin/bash"
		return nil
	})
}

// runGuest prepares the kernel, builds init and the commands, lets fill add
// the mode's contents, writes the initramfs and boots it.
func runGuest(env *fetch.Env, o options, mode plan.Mode, fill func(*vm.Image, *builder) error) error {
	g, err := buildGuest(env, o, mode, fill)
	if err != nil {
		return err
	}
	defer g.cleanup()
	env.Logf("booting %s guest, kernel %s (%s)", o.arch, g.kernel.Version, vm.SizeOf(g.initrd))
	start := time.Now()
	out := o.consoleOut()
	console := newFailures(out)
	status, err := vm.Boot(context.Background(), o.arch, g.kernel.Vmlinuz, g.initrd, o.timeout, console, mode == plan.ModeShell)
	if errors.Is(err, vm.ErrKernelDied) {
		// The emulator, not the code under test: nothing of ours ran.
		env.Logf("%v; booting again, once", err)
		console = newFailures(out)
		status, err = vm.Boot(context.Background(), o.arch, g.kernel.Vmlinuz, g.initrd, o.timeout, console, false)
	}
	if err == nil {
		env.Logf("%s guest finished in %v with status %d", o.arch, time.Since(start).Round(time.Second), status)
		if status != 0 {
			err = fmt.Errorf("%s guest: exit status %d", o.arch, status)
		}
	}
	if err != nil {
		report := console.report(fmt.Sprintf("%s guest on Linux %s", o.arch, g.kernel.Version))
		fmt.Fprint(out, report)
		return &guestFailed{err: err, report: report}
	}
	return nil
}

// guestFailed is a guest run that failed, with what its console said
// failed (failures.report), for a run over several kernels to repeat at
// its end.
type guestFailed struct {
	err    error
	report string
}

func (e *guestFailed) Error() string { return e.err.Error() }
func (e *guestFailed) Unwrap() error { return e.err }

// guestImage is a written initramfs and the kernel it boots with.
type guestImage struct {
	kernel  *fetch.Kernel
	initrd  string
	cleanup func()
}

// buildGuest prepares the kernel, builds init and the commands, lets fill
// add the mode's contents and writes the initramfs.
func buildGuest(env *fetch.Env, o options, mode plan.Mode, fill func(*vm.Image, *builder) error) (*guestImage, error) {
	k, err := prepare(env, o)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(o.cache, "run-")
	if err != nil {
		return nil, err
	}
	g := &guestImage{kernel: k, initrd: filepath.Join(work, "initrd.cpio"), cleanup: func() {}}
	if !o.keep {
		g.cleanup = func() { os.RemoveAll(work) }
	}
	if o.ctools && o.arch != runtime.GOARCH {
		// The C tools are this host's binaries; the tests say so when they
		// would need them (internal/testenv).
		env.Logf("not packing the C tools into the %s guest: they are %s binaries, so interop with C runs on %s only", o.arch, runtime.GOARCH, runtime.GOARCH)
		o.ctools = false
	}
	if err := fillImage(env, o, mode, k, work, fill); err != nil {
		g.cleanup()
		return nil, err
	}
	return g, nil
}

func fillImage(env *fetch.Env, o options, mode plan.Mode, k *fetch.Kernel, work string, fill func(*vm.Image, *builder) error) error {
	initrd := filepath.Join(work, "initrd.cpio")
	if o.race && o.arch != runtime.GOARCH {
		return fmt.Errorf("-race: race-enabled binaries use the host's libc, so they run in %s guests only", runtime.GOARCH)
	}
	b := o.shared
	if b == nil {
		b = &builder{arch: o.arch, out: work, race: o.race}
	}
	if err := b.programs(); err != nil {
		return err
	}
	work = b.out
	im := vm.NewImage(k, plan.Plan{Mode: mode, Arch: o.arch, CTools: o.ctools, Hog: o.hog, Env: map[string]string{}})
	if k.Siw == "" {
		// A kernel without siw.ko (6.18's, arm64's) gets rxe0 alone;
		// the tests say why siw is missing (internal/testenv).
		im.Plan.Drivers = []string{"rxe"}
		im.Plan.Env[plan.NoSiwEnv] = k.NoSiw
	}
	im.Files["/init"] = filepath.Join(work, "init")
	bins, _ := filepath.Glob(filepath.Join(work, "bin", "*"))
	for _, bin := range bins {
		im.Files["/opt/purerdma/bin/"+filepath.Base(bin)] = bin
	}
	if o.ctools {
		files, err := env.CToolFiles()
		if err != nil {
			return err
		}
		im.HostLibs = append(im.HostLibs, files...)
		// The C test peers (test/*/testdata/peer.c) link librpma from the C tools.
		peers, libs, err := testPeers(env, o.arch, filepath.Join(work, "peers"))
		if err != nil {
			return err
		}
		for guest, host := range peers {
			im.Files[guest] = host
		}
		im.HostLibs = append(im.HostLibs, libs...)
	}
	if o.extra != "" {
		if err := im.AddExtra(env, o.extra); err != nil {
			return err
		}
	}
	if err := fill(im, b); err != nil {
		return err
	}
	return im.Write(initrd)
}

// splitArgs separates package patterns from test flags: the flags follow
// "--", or are all the arguments when the first one is a flag.
func splitArgs(args []string) (patterns, flags []string) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:]
		}
	}
	if len(args) > 0 && strings.HasPrefix(args[0], "-") {
		return nil, args
	}
	return args, nil
}

// goTestFlags are the flags of go test that a test binary takes as
// -test.NAME. Other flags are the package's own (test/soak's
// -soak.duration) and pass unchanged.
var goTestFlags = map[string]bool{
	"bench": true, "benchmem": true, "benchtime": true, "blockprofile": true, "count": true,
	"coverprofile": true, "cpu": true, "cpuprofile": true, "failfast": true, "fullpath": true,
	"fuzz": true, "fuzztime": true, "list": true, "memprofile": true, "mutexprofile": true,
	"outputdir": true, "parallel": true, "run": true, "short": true, "shuffle": true,
	"skip": true, "timeout": true, "trace": true, "v": true,
}

// guestTestFlags spells go test's flags as a test binary takes them
// (-run becomes -test.run), adds -test.v so the output names every test,
// and a -test.timeout that ends before the guest's time limit.
func guestTestFlags(flags []string, limit time.Duration) []string {
	var out []string
	verbose, timeout := false, false
	for _, f := range flags {
		if bare, _, _ := strings.Cut(strings.TrimLeft(f, "-"), "="); strings.HasPrefix(f, "-") && goTestFlags[bare] {
			f = "-test." + strings.TrimLeft(f, "-")
		}
		name, _, _ := strings.Cut(f, "=")
		verbose = verbose || name == "-test.v"
		timeout = timeout || name == "-test.timeout"
		out = append(out, f)
	}
	if !verbose {
		out = append([]string{"-test.v"}, out...)
	}
	if !timeout {
		out = append([]string{"-test.timeout=" + (limit - time.Minute).String()}, out...)
	}
	return out
}

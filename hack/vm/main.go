// Command vm is purerdma's test harness: it boots Debian's kernel in QEMU
// with soft-RoCE (rxe0) and SoftiWARP (siw0) and runs the integration tests,
// the demo or a shell inside. See README.md.
//
//	go run ./hack/vm test [flags] [packages] [-- test flags]
//	go run ./hack/vm demo|shell|fetch [flags]
//	go run ./hack/vm bench [flags] [-- benchcmp compare flags]
//	go run ./hack/vm profile [flags] [-- benchcmp profile flags]
//	go run ./hack/vm pair [flags] [packages] [-- test flags]
//	go run ./hack/vm peers -out dir
//	go run ./hack/vm packages
//	go run ./hack/vm apt install PKG... | apt candidate PKG
//
// peers and packages serve make test-native (hack/native.sh), which runs
// the tests on the host's own devices: peers compiles the C test peers
// for the host as -ctools does for the guest, packages lists the Debian
// packages the C side of the tests needs there.
//
// apt is the repository's one way to apt (see aptCommand): the shell
// scripts install with it what the harness installs with fetch.Env.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/purerdma/purerdma/internal/vm/fetch"
	"github.com/purerdma/purerdma/internal/vm/plan"
)

type options struct {
	arch    string
	kernel  string // kernel series, e.g. "6.12"
	cache   string
	timeout time.Duration
	ctools  bool
	race    bool
	keep    bool
	hog     int       // busy loops beside the tests (-hog)
	sched   bool      // profile: trace the scheduler instead of sampling (-sched)
	extra   string    // a host directory packed as plan.ExtraDir (-extra)
	out     string    // where peers puts the compiled C test peers (-out)
	console io.Writer // where the guest's console goes; nil for os.Stdout
	shared  *builder  // the binaries of a test over several kernels, built once
}

// consoleOut is where the guest's console goes: o.console, or standard output.
func (o options) consoleOut() io.Writer {
	if o.console != nil {
		return o.console
	}
	return os.Stdout
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmd := os.Args[1]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	var o options
	fs.StringVar(&o.arch, "arch", "amd64", "guest architecture")
	fs.StringVar(&o.kernel, "kernel", fetch.DefaultSeries, "kernel series: 6.1, 6.12, 6.18 (trixie-backports, rxe only) or 7 (the canary): the newest Debian kernel of it that apt offers")
	fs.StringVar(&o.cache, "cache", defaultCache(), "cache directory (kernels, siw.ko, images)")
	fs.DurationVar(&o.timeout, "timeout", 15*time.Minute, "time limit for the whole guest run")
	fs.BoolVar(&o.ctools, "ctools", false, "pack rdma-core's C tools and libraries into the guest")
	fs.BoolVar(&o.keep, "keep", false, "keep the built initramfs")
	fs.BoolVar(&o.race, "race", false, "build the test binaries with the race detector (cgo, the host's libc in the guest; host architecture only)")
	fs.StringVar(&o.extra, "extra", "", "pack this host directory's files into the guest under "+plan.ExtraDir+" (on PATH, named by PURERDMA_EXTRA) with their shared libraries")
	fs.IntVar(&o.hog, "hog", 0, "run this many busy loops in the guest beside the tests (a CPU hog: timing races show under load)")
	fs.BoolVar(&o.sched, "sched", false, "profile: trace the scheduler (benchcmp profile -sched) and write docs/profile-sched-linux-<series>.md")
	fs.StringVar(&o.out, "out", "", "peers: the directory the compiled C test peers go to")
	fs.Parse(os.Args[2:])

	env := &fetch.Env{Log: os.Stderr}
	var err error
	switch cmd {
	case "fetch":
		_, err = prepare(env, o)
	case "test":
		err = test(env, o, fs.Args())
	case "demo":
		err = demo(env, o)
	case "shell":
		err = shell(env, o)
	case "bench":
		err = bench(env, o, fs.Args())
	case "profile":
		err = profile(env, o, fs.Args())
	case "pair":
		err = pair(env, o, fs.Args())
	case "peers":
		err = hostPeers(env, o.out)
	case "packages":
		for _, p := range nativePackages() {
			fmt.Println(p)
		}
	case "apt":
		err = aptCommand(env, fs.Args())
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vm:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: vm test|pair|demo|bench|profile|shell|fetch [-arch amd64] [-kernel 6.1] [-cache dir] [-timeout d] [-ctools] [-extra dir] [packages] [-- test flags]")
	fmt.Fprintln(os.Stderr, "       vm peers -out dir | vm packages | vm apt install PKG... | vm apt candidate PKG")
	os.Exit(2)
}

// aptCommand is vm apt, what hack/abicheck.sh, conformance.sh, native.sh
// and benchhost.sh (valgrind, and the rest through conformance.sh) call
// instead of apt-get, so
// that they refresh stale package lists as the harness does:
//
//	install PKG...  installs the packages dpkg does not list as
//	                installed (fetch.Env.Install: sudo when not root,
//	                apt-get update once when the install fails, then
//	                again); prints nothing on stdout, logs on stderr
//	candidate PKG   prints the version apt would install, or nothing
//	                when its lists offer none (they are only read)
func aptCommand(env *fetch.Env, args []string) error {
	if len(args) == 0 {
		usage()
	}
	switch sub, pkgs := args[0], args[1:]; {
	case sub == "install" && len(pkgs) > 0:
		return env.Install(pkgs...)
	case sub == "candidate" && len(pkgs) == 1:
		v, err := fetch.Candidate(pkgs[0])
		if err == nil && v != "" {
			fmt.Println(v)
		}
		return err
	}
	usage()
	return nil
}

// defaultCache is .cache/vm at the top of the repository, or PURERDMA_CACHE.
func defaultCache() string {
	if c := os.Getenv("PURERDMA_CACHE"); c != "" {
		return c
	}
	dir, _ := os.Getwd()
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, ".cache", "vm")
		}
	}
	return filepath.Join(dir, ".cache", "vm")
}

// prepare installs QEMU and fills the kernel cache.
func prepare(env *fetch.Env, o options) (*fetch.Kernel, error) {
	if _, err := env.EnsureQEMU(o.arch); err != nil {
		return nil, err
	}
	return env.Kernel(o.cache, o.arch, o.kernel)
}

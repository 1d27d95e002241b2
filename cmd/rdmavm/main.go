//go:build linux

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/purerdma/purerdma/internal/vm/fetch"
	"github.com/purerdma/purerdma/internal/vm/guest"
)

func main() {
	if os.Getpid() == 1 {
		guest.Main()
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// config is what the flags ask for.
type config struct {
	kernel  string
	arch    string
	devices string
	ctools  bool
	pair    bool
	timeout time.Duration
	cache   string
	vmlinuz string
	modules string
	siw     string
	verbose bool
}

// usageError is a command line rdmavm cannot run; it exits 2, as flag
// errors do.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func parse(args []string, stderr io.Writer) (config, []string, error) {
	var c config
	fs := flag.NewFlagSet("rdmavm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go test -exec 'rdmavm [flags]' [packages]\n       rdmavm [flags] [--] program [args]")
		fs.PrintDefaults()
	}
	fs.StringVar(&c.kernel, "kernel", fetch.DefaultSeries, "kernel series: 6.1 (Debian 12's own), 6.12 (bookworm-security), 6.18 (trixie-backports, rxe only) or 7 (the newest 7.x, rxe only); the newest Debian kernel of it")
	fs.StringVar(&c.arch, "arch", "", "guest architecture, amd64 or arm64 (default: the program's)")
	fs.StringVar(&c.devices, "devices", "rxe,siw", "RDMA devices to create: rxe, siw or rxe,siw (arm64 guests have rxe only)")
	fs.BoolVar(&c.ctools, "ctools", false, "pack rdma-core's C tools (ibv_*, rping, rstream, perftest's ib_*, librpma) into the guest, on PATH")
	fs.BoolVar(&c.pair, "pair", false, "boot two guests, a (server) and b (client), on one wire, each running the program")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "time limit for the guest, boot included")
	fs.StringVar(&c.cache, "cache", defaultCache(), "cache directory for kernels and siw.ko ($PURERDMA_CACHE)")
	fs.StringVar(&c.vmlinuz, "vmlinuz", "", "boot this kernel image instead of fetching one (needs -modules)")
	fs.StringVar(&c.modules, "modules", "", "with -vmlinuz: the kernel's modules directory, lib/modules/<version>")
	fs.StringVar(&c.siw, "siw", "", "with -vmlinuz: a siw.ko built for that kernel (without it the guest has no siw0)")
	fs.BoolVar(&c.verbose, "v", false, "show the guest's console and rdmavm's set-up on stderr")
	if err := fs.Parse(args); err != nil {
		return c, nil, usageError{err.Error()}
	}
	rest := fs.Args()
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	if len(rest) == 0 {
		fs.Usage()
		return c, nil, usageError{"no program to run"}
	}
	if (c.vmlinuz == "") != (c.modules == "") {
		return c, nil, usageError{"-vmlinuz and -modules go together"}
	}
	return c, rest, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	c, cmd, err := parse(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "rdmavm:", err)
		return 2
	}
	code, err := c.runGuest(cmd, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "rdmavm:", err)
		return 1
	}
	return code
}

// defaultCache is PURERDMA_CACHE, or purerdma/vm in the user's cache
// directory.
func defaultCache() string {
	if c := os.Getenv("PURERDMA_CACHE"); c != "" {
		return c
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return dir + "/purerdma/vm"
}

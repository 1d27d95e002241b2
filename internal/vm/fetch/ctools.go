package fetch

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
)

// CToolPackages are the Debian packages of the C reference stack.
// linux-perf is Debian 12's perf, of the guest kernel's series: rperf
// profile runs it.
var CToolPackages = []string{"ibverbs-utils", "rdmacm-utils", "perftest", "librpma-dev", "ibverbs-providers", "rdma-core", "linux-perf", "iproute2"}

// CTools are the programs later interop tests run against.
var CTools = []string{
	"ibv_devices", "ibv_devinfo", "ibv_rc_pingpong", "ibv_ud_pingpong", "ibv_srq_pingpong",
	"rping", "rstream", "riostream", "rcopy", "ucmatose", "udaddy", "mckey", "rdma_server", "rdma_client",
	"ib_write_lat", "ib_read_lat", "ib_send_lat", "ib_atomic_lat",
	"ib_write_bw", "ib_read_bw", "ib_send_bw",
	"perf",
	"rdma", // iproute2's, which cmd/rdma is compared with
}

// CToolFiles installs the C reference stack and lists the host files a
// guest needs to run it: the programs, the shared libraries they load
// (with the dynamic loader), libgcc_s (which glibc loads on thread cancel,
// as rping does), librpma, librspreload, and the libibverbs providers with their .driver
// files.
func (e *Env) CToolFiles() ([]string, error) {
	if err := e.Install(CToolPackages...); err != nil {
		return nil, err
	}
	var files []string
	for _, t := range CTools {
		p, err := exec.LookPath(t)
		if err != nil {
			return nil, fmt.Errorf("C tool %s: %w", t, err)
		}
		files = append(files, p)
	}
	for _, pattern := range []string{
		"/usr/lib/*-linux-gnu/libibverbs/*.so",
		"/usr/lib/*-linux-gnu/librpma.so*",
		"/usr/lib/*-linux-gnu/libgcc_s.so.1",
		// librdmacm1's LD_PRELOAD library, which turns a TCP program's
		// socket calls into rsockets (rsocket's interop test).
		"/usr/lib/*-linux-gnu/rsocket/librspreload.so",
		"/etc/libibverbs.d/*.driver",
	} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	return WithLibraries(files)
}

// WithLibraries adds to the ELF files in files the shared libraries ldd
// says they load, and returns the sorted set.
func WithLibraries(files []string) ([]string, error) {
	set := map[string]bool{}
	for _, f := range files {
		set[f] = true
		if filepath.Ext(f) == ".driver" {
			continue
		}
		libs, err := ldd(f)
		if err != nil {
			return nil, err
		}
		for _, l := range libs {
			set[l] = true
		}
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	return out, nil
}

// lddPath matches the absolute paths in ldd's output: "libx.so => /path
// (0x...)" and the loader's "/lib64/ld-linux-x86-64.so.2 (0x...)".
var lddPath = regexp.MustCompile(`(?m)(?:=>\s+|^\s+)(/\S+)\s+\(0x`)

func ldd(file string) ([]string, error) {
	out, err := output("ldd", file)
	if err != nil {
		return nil, err
	}
	var libs []string
	for _, m := range lddPath.FindAllStringSubmatch(out, -1) {
		libs = append(libs, m[1])
	}
	return libs, nil
}

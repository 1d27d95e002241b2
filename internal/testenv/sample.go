package testenv

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// ProcSample is what a long-running test (test/soak) watches for growth
// in its own process: the leak check's fds and library mappings, and
// the resident set and mapping count that a leak elsewhere would raise.
type ProcSample struct {
	RSS      uint64         // VmRSS of /proc/self/status, in bytes
	RSSAnon  uint64         // RssAnon: the anonymous part, where a leak grows (the rest is mostly the binary's code, paged in as it runs)
	FDs      int            // open file descriptors
	FDNames  map[int]string // what each is, as /proc/self/fd says
	Maps     int            // every mapping of /proc/self/maps
	LibBytes uint64         // the library's mappings (/dev/infiniband files and mr.Alloc memory), as the leak check sums them
}

// SampleProcess reads the process's ProcSample.
func SampleProcess() (ProcSample, error) {
	var s ProcSample
	fds, err := openFDs()
	if err != nil {
		return s, err
	}
	s.FDs, s.FDNames = len(fds), fds
	sums, err := readMaps()
	if err != nil {
		return s, err
	}
	for _, m := range sums {
		s.LibBytes += m.Bytes
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return s, err
	}
	s.Maps = bytes.Count(maps, []byte("\n"))
	st, err := status("VmRSS", "RssAnon")
	if err != nil {
		return s, err
	}
	s.RSS, s.RSSAnon = st[0], st[1]
	return s, nil
}

// status reads the named sizes from /proc/self/status ("VmRSS:	   12345
// kB"), in bytes.
func status(names ...string) ([]uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v := make([]uint64, len(names))
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		i := slices.Index(names, name)
		if !ok || i < 0 {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("/proc/self/status: %q: %w", sc.Text(), err)
		}
		v[i] = kb << 10
		found++
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if found != len(names) {
		return nil, fmt.Errorf("/proc/self/status lacks one of %q", names)
	}
	return v, nil
}

// DeviceResources returns the kernel's resource counts of the RDMA device
// named dev (`rdma resource show dev`: pd, cq, qp, cm_id, mr, ctx, srq),
// the ones the leak check compares; nil when there is no such device.
func DeviceResources(dev string) (map[string]uint64, error) {
	all, err := resourcesFunc()
	if err != nil {
		return nil, err
	}
	return all[dev], nil
}

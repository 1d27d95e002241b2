package testenv

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ProcSample is what a long-running test (test/soak) watches for growth
// in its own process: the leak check's fds and library mappings, and
// the resident set and mapping count that a leak elsewhere would raise.
type ProcSample struct {
	RSS      uint64 // VmRSS of /proc/self/status, in bytes
	FDs      int    // open file descriptors
	Maps     int    // every mapping of /proc/self/maps
	LibBytes uint64 // the library's mappings (/dev/infiniband files and mr.Alloc memory), as the leak check sums them
}

// SampleProcess reads the process's ProcSample.
func SampleProcess() (ProcSample, error) {
	var s ProcSample
	fds, err := openFDs()
	if err != nil {
		return s, err
	}
	s.FDs = len(fds)
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
	if s.RSS, err = vmRSS(); err != nil {
		return s, err
	}
	return s, nil
}

// vmRSS reads VmRSS from /proc/self/status ("VmRSS:	   12345 kB").
func vmRSS() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/self/status: %q: %w", sc.Text(), err)
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/self/status has no VmRSS")
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

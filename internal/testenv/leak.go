package testenv

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/rdmanl"
)

// The leak check compares two snapshots of what a test binary may leave
// behind: the kernel's resource summary of every RDMA device (`rdma
// resource show`: PDs, CQs, QPs, MRs, contexts...), the process's open
// file descriptors, and its memory mappings of /dev/infiniband files and
// from mr.Alloc (maps.go).
//
// Both are global, so the check is only meaningful when nothing else runs
// between the two snapshots:
//
//   - The resource counts are per device, for every process and the kernel.
//     In the VM the test binaries run one after another and nothing else
//     uses the devices; with make test-native only the devices under test
//     (PURERDMA_DEV) are counted, and other users of those devices make
//     the check report their objects as changes.
//   - The fds are the whole process's. Use Main from TestMain, or CheckLeaks
//     from a test that is not parallel (no t.Parallel) and whose package's
//     other tests do not run at the same time; parallel subtests of that
//     test are fine, since its cleanup runs after them.
//
// The Go runtime opens a few fds of its own lazily: the netpoller's epoll
// instance and its wake-up eventfd appear the first time a pollable file is
// opened, and stay. The snapshot makes sure they exist first, by opening
// and closing a pipe, so that they are part of the starting state. An
// *os.File dropped without Close is closed by the garbage collector at some
// point, so whether such a leak shows up depends on when the collector ran:
// the check catches it only when it has not run yet.
//
// Outside the VM and without make test-native the check does nothing: the
// devices a developer's host may have are not the tests' to watch.

// Main runs the tests of m with a leak check around them, and returns the
// exit code for os.Exit: that of m.Run, or 1 if the tests left RDMA
// objects or file descriptors behind, which it prints. Use it as
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
func Main(m *testing.M) int {
	if !leakCheckEnabled() {
		return m.Run()
	}
	before, err := takeSnapshot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: leak check: %v\n", err)
		return 1
	}
	code := m.Run()
	d, err := settle(before)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: leak check: %v\n", err)
		return max(code, 1)
	}
	if d != "" {
		fmt.Fprintf(os.Stderr, "testenv: leak check: the tests left changes behind:\n%s", d)
		return max(code, 1)
	}
	return code
}

// CheckLeaks snapshots the RDMA resources, the open fds and the library's
// mappings now, and makes the test fail at its end if they are not back to these values. Call it
// first in the test, so that its cleanup runs after the test's own
// cleanups. See Main for the rules: no t.Parallel, and no other test of the
// package running meanwhile.
func CheckLeaks(t testing.TB) {
	t.Helper()
	if !leakCheckEnabled() {
		return
	}
	before, err := takeSnapshot()
	if err != nil {
		t.Fatalf("leak check: %v", err)
	}
	t.Cleanup(func() {
		d, err := settle(before)
		if err != nil {
			t.Errorf("leak check: %v", err)
			return
		}
		if d != "" {
			t.Errorf("leak check: the test left changes behind:\n%s", strings.TrimSuffix(d, "\n"))
		}
	})
}

// settle compares snapshots with before until they agree, for up to a
// second: the kernel frees some objects after the command that destroys
// them returns (rxe drops a QP's last reference from its tasklets), and an
// rdma_cm ID's teardown may still be running. It returns the last diff.
func settle(before snapshot) (string, error) {
	for deadline := time.Now().Add(settleTime); ; time.Sleep(20 * time.Millisecond) {
		after, err := takeSnapshot()
		if err != nil {
			return "", err
		}
		if d := before.diff(after); d == "" || time.Now().After(deadline) {
			return d, nil
		}
	}
}

func leakCheckEnabled() bool { return InVM() || Native() }

// snapshot is the state the leak check compares.
type snapshot struct {
	// res holds the resource counts by device name, then resource name.
	res map[string]map[string]uint64
	// fds holds the open fds and what /proc/self/fd says they are
	// (a path, "socket:[123]", "anon_inode:[eventpoll]"...).
	fds map[int]string
	// maps sums the library's memory mappings (maps.go).
	maps mapSums
}

// settleTime is how long settle waits; tests of the check shorten it.
var settleTime = time.Second

// resourcesFunc reads the RDMA resource counts; tests replace it.
var resourcesFunc = resources

func takeSnapshot() (snapshot, error) {
	if err := startPoller(); err != nil {
		return snapshot{}, err
	}
	res, err := resourcesFunc()
	if err != nil {
		return snapshot{}, err
	}
	fds, err := openFDs()
	if err != nil {
		return snapshot{}, err
	}
	maps, err := readMaps()
	if err != nil {
		return snapshot{}, err
	}
	return snapshot{res: res, fds: fds, maps: maps}, nil
}

// startPoller makes the runtime's poller exist before fds are counted: it
// opens its epoll instance and eventfd on first use and never closes them.
// An os.Pipe joins the poller.
func startPoller() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	r.Close()
	w.Close()
	return nil
}

// resources reads the summary of every RDMA device, or in a native run of
// every device under test.
func resources() (map[string]map[string]uint64, error) {
	c, err := rdmanl.Dial()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	sums, err := c.ResourceSummaries()
	if err != nil {
		return nil, err
	}
	res := make(map[string]map[string]uint64, len(sums))
	for _, s := range sums {
		if nativeSelected(s.DevName) {
			res[s.DevName] = s.Map()
		}
	}
	return res, nil
}

// openFDs lists /proc/self/fd, without the fd that reads it.
func openFDs() (map[int]string, error) {
	dir, err := os.Open("/proc/self/fd")
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	self := int(dir.Fd())
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	fds := make(map[int]string, len(names))
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd == self {
			continue
		}
		target, err := os.Readlink("/proc/self/fd/" + name)
		if err != nil {
			// Closed since the listing, by another goroutine.
			continue
		}
		fds[fd] = target
	}
	return fds, nil
}

// diff describes how now differs from s, one change a line, or returns ""
// if they are the same.
func (s snapshot) diff(now snapshot) string {
	var b strings.Builder
	for _, dev := range sortedKeys(s.res, now.res) {
		was, is := s.res[dev], now.res[dev]
		switch {
		case was == nil:
			fmt.Fprintf(&b, "\tRDMA device %s appeared\n", dev)
			continue
		case is == nil:
			fmt.Fprintf(&b, "\tRDMA device %s disappeared\n", dev)
			continue
		}
		for _, name := range sortedKeys(was, is) {
			v0, ok0 := was[name]
			v1, ok1 := is[name]
			switch {
			case !ok0:
				fmt.Fprintf(&b, "\t%s: %s appeared in the summary with %d\n", dev, name, v1)
			case !ok1:
				fmt.Fprintf(&b, "\t%s: %s disappeared from the summary (was %d)\n", dev, name, v0)
			case v0 != v1:
				fmt.Fprintf(&b, "\t%s: %s %d -> %d (%+d)\n", dev, name, v0, v1, int64(v1-v0))
			}
		}
	}
	for _, fd := range sortedKeys(s.fds, now.fds) {
		was, ok0 := s.fds[fd]
		is, ok1 := now.fds[fd]
		switch {
		case !ok0:
			fmt.Fprintf(&b, "\tfd %d -> %s left open\n", fd, is)
		case !ok1:
			fmt.Fprintf(&b, "\tfd %d -> %s was closed\n", fd, was)
		case was != is:
			fmt.Fprintf(&b, "\tfd %d -> %s was closed, and reopened -> %s\n", fd, was, is)
		}
	}
	if n0, n1 := len(s.fds), len(now.fds); n0 != n1 {
		fmt.Fprintf(&b, "\t%d fds open, %d at the start\n", n1, n0)
	}
	s.maps.diff(now.maps, &b)
	return b.String()
}

// sortedKeys returns the keys of a and b, sorted, each once.
func sortedKeys[K int | string, V any](a, b map[K]V) []K {
	keys := make([]K, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// GoroutinesBack waits for the goroutine count to drop to before, taken
// ahead of what started them, and fails t if it has not after 10 s (a
// bound for a loaded guest, not a timing requirement: it returns as soon
// as the count drops). after names what should have ended them.
func GoroutinesBack(t testing.TB, before int, after string) {
	t.Helper()
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(10 * time.Second); n > before && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	if n > before {
		t.Errorf("%d goroutines after %s, %d before: it left some behind", n, after, before)
	}
}

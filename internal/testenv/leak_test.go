package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/purerdma/purerdma/mr"
)

func TestSnapshotDiff(t *testing.T) {
	base := snapshot{
		res: map[string]map[string]uint64{
			"rxe0": {"pd": 1, "cq": 1, "qp": 1, "mr": 0},
			"siw0": {"pd": 0, "cq": 0, "qp": 0, "mr": 0},
		},
		fds: map[int]string{0: "/dev/null", 1: "pipe:[1]", 2: "pipe:[2]", 3: "anon_inode:[eventpoll]"},
	}
	// change returns a copy of base changed by fn.
	change := func(fn func(s *snapshot)) snapshot {
		s := snapshot{res: map[string]map[string]uint64{}, fds: map[int]string{}}
		for dev, m := range base.res {
			s.res[dev] = map[string]uint64{}
			for k, v := range m {
				s.res[dev][k] = v
			}
		}
		for fd, target := range base.fds {
			s.fds[fd] = target
		}
		fn(&s)
		return s
	}
	for _, tt := range []struct {
		name string
		now  snapshot
		want []string // lines of the diff, without the tab
	}{
		{"same", change(func(*snapshot) {}), nil},
		{"pd leaked", change(func(s *snapshot) { s.res["rxe0"]["pd"] = 2 }), []string{"rxe0: pd 1 -> 2 (+1)"}},
		{"objects destroyed", change(func(s *snapshot) { s.res["rxe0"]["qp"] = 0; s.res["rxe0"]["cq"] = 0 }),
			[]string{"rxe0: cq 1 -> 0 (-1)", "rxe0: qp 1 -> 0 (-1)"}},
		{"two devices", change(func(s *snapshot) { s.res["siw0"]["mr"] = 3; s.res["rxe0"]["mr"] = 1 }),
			[]string{"rxe0: mr 0 -> 1 (+1)", "siw0: mr 0 -> 3 (+3)"}},
		{"device gone", change(func(s *snapshot) { delete(s.res, "siw0") }), []string{"RDMA device siw0 disappeared"}},
		{"device new", change(func(s *snapshot) { s.res["rxe1"] = map[string]uint64{} }), []string{"RDMA device rxe1 appeared"}},
		{"entry new", change(func(s *snapshot) { s.res["rxe0"]["srq"] = 0 }), []string{"rxe0: srq appeared in the summary with 0"}},
		{"fd leaked", change(func(s *snapshot) { s.fds[7] = "/dev/infiniband/uverbs0" }),
			[]string{"fd 7 -> /dev/infiniband/uverbs0 left open", "5 fds open, 4 at the start"}},
		{"fd closed", change(func(s *snapshot) { delete(s.fds, 0) }),
			[]string{"fd 0 -> /dev/null was closed", "3 fds open, 4 at the start"}},
		{"fd reused", change(func(s *snapshot) { s.fds[0] = "socket:[9]" }),
			[]string{"fd 0 -> /dev/null was closed, and reopened -> socket:[9]"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := base.diff(tt.now)
			var want string
			for _, l := range tt.want {
				want += "\t" + l + "\n"
			}
			if got != want {
				t.Errorf("diff:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestOpenFDs checks that the fd listing sees a file opened and closed,
// and is otherwise stable: the runtime's lazily opened fds must not show up
// as changes.
func TestOpenFDs(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip(err)
	}
	if err := startPoller(); err != nil {
		t.Fatal(err)
	}
	fds := func() snapshot {
		t.Helper()
		m, err := openFDs()
		if err != nil {
			t.Fatal(err)
		}
		return snapshot{fds: m}
	}
	before := fds()
	if d := before.diff(fds()); d != "" {
		t.Fatalf("two listings differ:\n%s", d)
	}

	path := filepath.Join(t.TempDir(), "leak")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// A pipe joins the poller, which must already exist.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	d := before.diff(fds())
	t.Logf("with a file and a pipe open:\n%s", d)
	if want := fmt.Sprintf("fd %d -> %s left open", f.Fd(), path); !strings.Contains(d, want) {
		t.Errorf("diff does not say %q", want)
	}
	if n := strings.Count(d, "-> pipe:["); n != 2 {
		t.Errorf("diff names %d pipe ends, want 2", n)
	}
	if n := strings.Count(d, "\n"); n != 4 {
		t.Errorf("diff has %d lines, want 3 fds and the count", n)
	}
	for _, c := range []*os.File{f, r, w} {
		c.Close()
	}
	if d := before.diff(fds()); d != "" {
		t.Errorf("after closing:\n%s", d)
	}
}

// fakeTB records what CheckLeaks reports, and runs its cleanups on demand.
type fakeTB struct {
	testing.TB
	errs     []string
	cleanups []func()
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.TB.Fatalf("CheckLeaks called Fatalf: "+format, args...)
}

func (f *fakeTB) finish() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// TestCheckLeaks runs CheckLeaks as in the VM, with fake RDMA devices.
func TestCheckLeaks(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip(err)
	}
	t.Setenv("PURERDMA_VM", "1")
	var pds atomic.Uint64
	resourcesFunc = func() (map[string]map[string]uint64, error) {
		return map[string]map[string]uint64{"rxe0": {"pd": pds.Load(), "qp": 0}}, nil
	}
	settleTime = 300 * time.Millisecond
	t.Cleanup(func() { resourcesFunc, settleTime = resources, time.Second })

	for _, tt := range []struct {
		name string
		test func(t *testing.T) // what the checked test does
		want []string           // what the report must say; nil for no report
	}{
		{"clean", func(t *testing.T) {
			pds.Add(1)
			f, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			pds.Add(^uint64(0))
		}, nil},
		{"pd left", func(*testing.T) { pds.Add(1) }, []string{"rxe0: pd 0 -> 1 (+1)"}},
		{"pd freed by the kernel a moment later", func(*testing.T) {
			pds.Add(1)
			time.AfterFunc(50*time.Millisecond, func() { pds.Add(^uint64(0)) })
		}, nil},
		{"mapping left", func(t *testing.T) {
			b, err := mr.Alloc(4096)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { mr.Free(b) }) // after CheckLeaks's cleanup
		}, []string{"mappings of mr.Alloc memory", "(+4096 bytes)"}},
		{"fd left", func(t *testing.T) {
			f, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() }) // after CheckLeaks's cleanup
		}, []string{"-> /dev/null left open"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pds.Store(0)
			tb := &fakeTB{TB: t}
			CheckLeaks(tb)
			tt.test(t)
			tb.finish()
			if tt.want == nil && len(tb.errs) != 0 {
				t.Errorf("CheckLeaks reported a clean test: %q", tb.errs)
			}
			if tt.want != nil && len(tb.errs) != 1 {
				t.Fatalf("CheckLeaks made %d reports, want 1: %q", len(tb.errs), tb.errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(tb.errs[0], w) {
					t.Errorf("report %q does not say %q", tb.errs[0], w)
				}
			}
			if len(tb.errs) > 0 {
				t.Log(tb.errs[0])
			}
		})
	}
}

// TestCheckLeaksOff checks that CheckLeaks does nothing on a plain host,
// which need not have RDMA netlink at all.
func TestCheckLeaksOff(t *testing.T) {
	t.Setenv("PURERDMA_VM", "")
	t.Setenv("PURERDMA_NATIVE", "")
	resourcesFunc = func() (map[string]map[string]uint64, error) {
		t.Error("CheckLeaks read RDMA resources on a plain host")
		return nil, nil
	}
	t.Cleanup(func() { resourcesFunc = resources })
	tb := &fakeTB{TB: t}
	CheckLeaks(tb)
	if len(tb.cleanups) != 0 {
		t.Errorf("CheckLeaks registered %d cleanups on a plain host", len(tb.cleanups))
	}
}

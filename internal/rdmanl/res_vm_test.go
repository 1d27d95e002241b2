package rdmanl_test

// An external test package: it imports uverbs, which imports rdmanl.

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/uverbs"
)

// TestResourceSummaryVM reads the resource summary of each device, checks
// that the dump agrees with the single-device request, and then proves
// that the counts are live: a verbs context and a PD created through
// uverbs raise "ctx" and "pd" by exactly one each, and closing them brings
// the summary back to where it started. The counts cover the whole device,
// so nothing else may use the device meanwhile; in the VM the test
// binaries run one after another.
func TestResourceSummaryVM(t *testing.T) {
	testenv.CheckLeaks(t)
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		c := dial(t)
		dev, err := c.DeviceByName(d.Name)
		if err != nil {
			t.Fatal(err)
		}
		summary := func() map[string]uint64 {
			t.Helper()
			s, err := c.ResourceSummary(dev.Index)
			if err != nil {
				t.Fatal(err)
			}
			if s.DevIndex != dev.Index || s.DevName != d.Name {
				t.Fatalf("summary of device %d is for %d %q", dev.Index, s.DevIndex, s.DevName)
			}
			t.Log(s)
			return s.Map()
		}

		start := summary()
		for _, name := range []string{"pd", "cq", "qp", "mr"} {
			if _, ok := start[name]; !ok {
				t.Errorf("summary has no %q entry", name)
			}
		}

		all, err := c.ResourceSummaries()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range all {
			if s.DevIndex == dev.Index {
				found = true
				if diff := cmp.Diff(start, s.Map()); diff != "" {
					t.Errorf("dump and request disagree (-request +dump):\n%s", diff)
				}
			}
		}
		if !found {
			t.Errorf("ResourceSummaries() has no device %d (%s): %v", dev.Index, d.Name, all)
		}

		// want is start with the given changes.
		want := func(delta map[string]uint64) map[string]uint64 {
			m := make(map[string]uint64, len(start))
			for k, v := range start {
				m[k] = v + delta[k]
			}
			return m
		}
		check := func(step string, want map[string]uint64) {
			t.Helper()
			if diff := cmp.Diff(want, summary()); diff != "" {
				t.Errorf("%s: summary (-want +got):\n%s", step, diff)
			}
		}
		// "ctx" is tracked since Linux 5.x; on a kernel without it
		// only the PD is checked.
		ctxDelta := map[string]uint64{}
		if _, ok := start["ctx"]; ok {
			ctxDelta["ctx"] = 1
		}

		ctx, err := uverbs.OpenName(d.Name)
		if err != nil {
			t.Fatal(err)
		}
		defer ctx.Close()
		check("after GET_CONTEXT", want(ctxDelta))

		pd, err := ctx.AllocPD()
		if err != nil {
			t.Fatal(err)
		}
		defer pd.Close()
		check("after ALLOC_PD", want(map[string]uint64{"pd": 1, "ctx": ctxDelta["ctx"]}))

		if err := pd.Close(); err != nil {
			t.Fatal(err)
		}
		check("after DEALLOC_PD", want(ctxDelta))

		if err := ctx.Close(); err != nil {
			t.Fatal(err)
		}
		check("after closing the context", start)

		// A PD left open when the context closes goes with it.
		ctx, err = uverbs.OpenName(d.Name)
		if err != nil {
			t.Fatal(err)
		}
		defer ctx.Close()
		if _, err := ctx.AllocPD(); err != nil {
			t.Fatal(err)
		}
		check("second context with a PD", want(map[string]uint64{"pd": 1, "ctx": ctxDelta["ctx"]}))
		if err := ctx.Close(); err != nil {
			t.Fatal(err)
		}
		check("after closing the second context", start)
	})
}

// TestResourceSummaryUnknownDeviceVM checks the kernel's answer for an
// index no device has.
func TestResourceSummaryUnknownDeviceVM(t *testing.T) {
	testenv.RequireVM(t)
	c := dial(t)
	if s, err := c.ResourceSummary(1 << 30); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("ResourceSummary of a missing device: %v, %v, want EINVAL", s, err)
	}
}

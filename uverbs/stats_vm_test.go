package uverbs_test

import (
	"slices"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/uverbs"
)

// count returns the count of the resource called name in rs, or -1.
func count(rs []uverbs.Resource, name string) int {
	i := slices.IndexFunc(rs, func(r uverbs.Resource) bool { return r.Name == name })
	if i < 0 {
		return -1
	}
	return int(rs[i].Count)
}

// TestResourcesAndCounters: Device.Resources counts a PD and a CQ of ours
// and lists the kinds Linux 6.1 sends, in its order; PortCounters has
// rxe's hw counters (sent_pkts grows with an RDMA write between two of
// our QPs) and none on siw; a hardware device's counters are its driver's
// and only logged; bad arguments are sentinel errors.
func TestResourcesAndCounters(t *testing.T) {
	testenv.CheckLeaks(t)
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		dev, err := uverbs.DeviceByName(d.Name)
		if err != nil {
			t.Fatal(err)
		}
		before, err := dev.Resources()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range before {
			names = append(names, r.Name)
		}
		if want := []string{"pd", "cq", "qp", "cm_id", "mr", "ctx", "srq"}; !slices.Equal(names, want) {
			t.Errorf("resource kinds %v, want %v", names, want)
		}
		r := newRig(t, d) // a context, a PD, a CQ, an MR
		after, err := dev.Resources()
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"ctx", "pd", "cq", "mr"} {
			if a, b := count(after, name), count(before, name); a != b+1 {
				t.Errorf("%s: %d after the rig, %d before; want one more", name, a, b)
			}
		}

		cs, err := dev.PortCounters(1)
		if err != nil {
			t.Fatal(err)
		}
		if d.Driver == "siw" {
			if len(cs) != 0 {
				t.Errorf("siw port counters %v, want none", cs)
			}
		} else if d.Hardware() {
			t.Logf("%s: %d port counters, not checked (sent_pkts and the count of 15 are rxe's): %v", d, len(cs), cs)
		} else {
			sent := func(cs []uverbs.Counter) int {
				i := slices.IndexFunc(cs, func(c uverbs.Counter) bool { return c.Name == "sent_pkts" })
				if i < 0 {
					t.Fatalf("no sent_pkts in %v", cs)
				}
				return int(cs[i].Value)
			}
			if len(cs) != 15 {
				t.Errorf("%d rxe counters, want 15 (rxe_hw_counters.c): %v", len(cs), cs)
			}
			s0 := sent(cs)
			a, b := r.qp(t, uverbs.RC, nil), r.qp(t, uverbs.RC, nil)
			r.connect(t, a, b.Num())
			r.connect(t, b, a.Num())
			if _, err := a.PostSend([]uverbs.SendWR{{ID: 1, Opcode: uverbs.WRRDMAWrite, Flags: uverbs.SendSignaled,
				SGE: []uverbs.SGE{r.sge(0, 8)}, RemoteAddr: r.mr.Addr() + 64, RKey: r.mr.RKey()}}); err != nil {
				t.Fatal(err)
			}
			if wc := r.poll(t, 1); wc[0].Err() != nil {
				t.Fatal(wc[0].Err())
			}
			// The core caches hw counters for hw_counters/lifespan
			// (rxe: 10 ms), so a read right after the write may still
			// show the old value (seen on arm64).
			s1 := s0
			for deadline := time.Now().Add(10 * time.Second); s1 < s0+2 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if cs, err = dev.PortCounters(1); err != nil {
					t.Fatal(err)
				}
				s1 = sent(cs)
			}
			// The write and its ack: rxe counts both on the one device.
			if s1 < s0+2 {
				t.Errorf("sent_pkts %d 10 s after an RDMA write, %d before; want 2 more at least", s1, s0)
			}
		}

		res := func(dev uverbs.Device) func() error {
			return func() error { _, err := dev.Resources(); return err }
		}
		counters := func(dev uverbs.Device, port int) func() error {
			return func() error { _, err := dev.PortCounters(port); return err }
		}
		n := testenv.RunBad(t, res(dev), []testenv.BadCase{
			testenv.Bad("Resources: no name", uverbs.ErrInvalid, res(uverbs.Device{})),
			testenv.Bad("Resources: unknown device", uverbs.ErrNoDevice, res(uverbs.Device{Name: "nodev9"})),
			testenv.Bad("PortCounters: port 0", uverbs.ErrInvalid, counters(dev, 0)),
			testenv.Bad("PortCounters: port -1", uverbs.ErrInvalid, counters(dev, -1)),
			testenv.Bad("PortCounters: port 2", uverbs.ErrInvalid, counters(dev, 2)),
			testenv.Bad("PortCounters: no name", uverbs.ErrInvalid, counters(uverbs.Device{}, 1)),
			testenv.Bad("PortCounters: unknown device", uverbs.ErrNoDevice, counters(uverbs.Device{Name: "nodev9"}, 1)),
			testenv.Bad("PortCounters: path in the name", uverbs.ErrInvalid, counters(uverbs.Device{Name: "../" + d.Name}, 1)),
		})
		t.Logf("%d bad inputs tried on %s", n, d.Name)
	})
}

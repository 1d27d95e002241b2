//go:build linux && !purerdma_stub

package rdmanl

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/netlink"
	"github.com/purerdma/purerdma/internal/netlink/nltest"
)

// resEncoding says how the fake kernel lays out a summary. The zero value
// is what Linux 6.1's fill_res_info sends on x86_64 and arm64.
type resEncoding struct {
	nestedFlag bool // set NLA_F_NESTED, which the kernel's nla_nest_start_noflag does not
	pad        bool // put the zero-type padding nla_put_u64_64bit adds on some architectures
	extra      bool // add an entry attribute a newer kernel might send (ENTRY_MAX, 19)
}

// resKernel is a fake RDMA netlink that answers RDMA_NLDEV_CMD_RES_GET as
// drivers/infiniband/core/nldev.c does: a dump lists every device, a plain
// request needs RDMA_NLDEV_ATTR_DEV_INDEX and fails with EINVAL for an
// unknown one.
type resKernel struct {
	sums []ResourceSummary
	enc  resEncoding
	reqs []netlink.Message
}

func (k *resKernel) dial(t *testing.T) *Conn {
	nl := nltest.Dial(k.answer)
	t.Cleanup(func() { nl.Close() })
	return &Conn{nl: nl}
}

func (k *resKernel) answer(req netlink.Message) ([]netlink.Message, error) {
	k.reqs = append(k.reqs, req)
	if req.Header.Type != nldev(abi.RDMA_NLDEV_CMD_RES_GET) {
		return nil, unix.EOPNOTSUPP
	}
	sums := k.sums
	if req.Header.Flags&unix.NLM_F_DUMP == 0 {
		index, ok := devIndex(req)
		if !ok {
			return nil, unix.EINVAL
		}
		i := slices.IndexFunc(k.sums, func(s ResourceSummary) bool { return s.DevIndex == index })
		if i < 0 {
			return nil, unix.EINVAL
		}
		sums = k.sums[i : i+1]
	}
	var msgs []netlink.Message
	for _, s := range sums {
		b, err := encodeResourceSummary(s, k.enc).Encode()
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, netlink.Message{Header: unix.NlMsghdr{Type: req.Header.Type}, Data: b})
	}
	return msgs, nil
}

// encodeResourceSummary follows fill_nldev_handle, fill_res_info and
// fill_res_info_entry.
func encodeResourceSummary(s ResourceSummary, enc resEncoding) *netlink.AttributeEncoder {
	nest := func(e *netlink.AttributeEncoder, typ uint16, fn func(*netlink.AttributeEncoder)) {
		if enc.nestedFlag {
			e.Nested(typ, func(e *netlink.AttributeEncoder) error { fn(e); return nil })
			return
		}
		inner := netlink.NewAttributeEncoder()
		fn(inner)
		b, err := inner.Encode()
		if err != nil {
			panic(err)
		}
		e.Bytes(typ, b)
	}
	e := netlink.NewAttributeEncoder()
	e.Uint32(abi.RDMA_NLDEV_ATTR_DEV_INDEX, s.DevIndex)
	e.String(abi.RDMA_NLDEV_ATTR_DEV_NAME, s.DevName)
	nest(e, abi.RDMA_NLDEV_ATTR_RES_SUMMARY, func(e *netlink.AttributeEncoder) {
		for _, r := range s.Resources {
			nest(e, abi.RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY, func(e *netlink.AttributeEncoder) {
				e.String(abi.RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME, r.Name)
				if enc.pad {
					e.Flag(abi.RDMA_NLDEV_ATTR_PAD)
				}
				e.Uint64(abi.RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR, r.Count)
				if enc.extra {
					e.Uint64(abi.RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR+1, 1<<20)
				}
			})
		}
	})
	return e
}

func summary(index uint32, name string, counts ...uint64) ResourceSummary {
	names := []string{"pd", "cq", "qp", "cm_id", "mr", "ctx", "srq"}
	s := ResourceSummary{DevIndex: index, DevName: name}
	for i, n := range counts {
		s.Resources = append(s.Resources, Resource{Name: names[i], Count: n})
	}
	return s
}

var (
	rxe0Res = summary(0, "rxe0", 2, 3, 1, 0, 4, 1, 0)
	siw0Res = summary(1, "siw0", 0, 0, 0, 0, 0, 0, 0)
)

func TestResourceSummary(t *testing.T) {
	skipBigEndian(t)
	big := summary(7, "mlx5_0", 1<<40, 1<<63, 0, 5, 1, 2, 3)
	for _, tt := range []struct {
		name string
		enc  resEncoding
		want ResourceSummary
	}{
		{"as 6.1 sends it", resEncoding{}, rxe0Res},
		{"all zero", resEncoding{}, siw0Res},
		{"counts above 32 bits", resEncoding{}, big},
		{"with NLA_F_NESTED", resEncoding{nestedFlag: true}, rxe0Res},
		{"with padding before the u64", resEncoding{pad: true}, big},
		{"with an entry attribute from a newer kernel", resEncoding{extra: true}, rxe0Res},
		{"as 4.x sends it (pd cq qp)", resEncoding{}, summary(7, "mlx4_0", 1, 2, 3)},
		{"no resources", resEncoding{}, ResourceSummary{DevIndex: 7, DevName: "empty0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := &resKernel{sums: []ResourceSummary{siw0Res, tt.want}, enc: tt.enc}
			got, err := k.dial(t).ResourceSummary(tt.want.DevIndex)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ResourceSummary (-want +got):\n%s", diff)
			}
			// As iproute2's `rdma resource show DEV`: a request with
			// an ack, not a dump, naming the device.
			req := k.reqs[0]
			if req.Header.Type != 0x1409 || req.Header.Flags != unix.NLM_F_REQUEST|unix.NLM_F_ACK {
				t.Errorf("request header %+v, want type 0x1409 flags REQUEST|ACK", req.Header)
			}
			want := []byte{8, 0, 1, 0, byte(tt.want.DevIndex), 0, 0, 0} // RDMA_NLDEV_ATTR_DEV_INDEX
			if diff := cmp.Diff(want, req.Data); diff != "" {
				t.Errorf("request attributes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResourceSummaryWire decodes bytes written out by hand from
// fill_res_info, so that the test does not only check the decoder
// against the test's own encoder.
func TestResourceSummaryWire(t *testing.T) {
	skipBigEndian(t)
	b := []byte{
		8, 0, 1, 0, 3, 0, 0, 0, // DEV_INDEX 3
		9, 0, 2, 0, 'r', 'x', 'e', '0', 0, 0, 0, 0, // DEV_NAME "rxe0"
		56, 0, 15, 0, // RES_SUMMARY, no NLA_F_NESTED
		24, 0, 16, 0, // RES_SUMMARY_ENTRY
		7, 0, 17, 0, 'p', 'd', 0, 0, // ENTRY_NAME "pd"
		12, 0, 18, 0, 5, 0, 0, 0, 0, 0, 0, 0, // ENTRY_CURR 5
		28, 0, 16, 0, // RES_SUMMARY_ENTRY
		10, 0, 17, 0, 'c', 'm', '_', 'i', 'd', 0, 0, 0, // ENTRY_NAME "cm_id"
		12, 0, 18, 0, 0, 1, 0, 0, 0, 0, 0, 0, // ENTRY_CURR 256
	}
	got, err := parseResourceSummary(b)
	if err != nil {
		t.Fatal(err)
	}
	want := ResourceSummary{DevIndex: 3, DevName: "rxe0", Resources: []Resource{{"pd", 5}, {"cm_id", 256}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseResourceSummary (-want +got):\n%s", diff)
	}
}

func TestResourceSummaries(t *testing.T) {
	skipBigEndian(t)
	for _, tt := range []struct {
		name string
		sums []ResourceSummary
	}{
		{"two devices", []ResourceSummary{rxe0Res, siw0Res}},
		{"one device", []ResourceSummary{siw0Res}},
		{"no device", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := &resKernel{sums: tt.sums}
			got, err := k.dial(t).ResourceSummaries()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.sums, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ResourceSummaries (-want +got):\n%s", diff)
			}
			if len(k.reqs) != 1 {
				t.Fatalf("%d requests, want one dump", len(k.reqs))
			}
			req := k.reqs[0]
			if req.Header.Type != 0x1409 || req.Header.Flags != unix.NLM_F_REQUEST|unix.NLM_F_DUMP || len(req.Data) != 0 {
				t.Errorf("request %+v %v, want a bare dump of type 0x1409", req.Header, req.Data)
			}
		})
	}
}

func TestResourceSummaryUnknownDevice(t *testing.T) {
	c := (&resKernel{sums: []ResourceSummary{rxe0Res}}).dial(t)
	if _, err := c.ResourceSummary(9); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("ResourceSummary of an unknown index: %v, want EINVAL", err)
	}
}

func TestResourceSummaryMalformed(t *testing.T) {
	head := []byte{
		8, 0, 1, 0, 0, 0, 0, 0, // DEV_INDEX 0
		9, 0, 2, 0, 'r', 'x', 'e', '0', 0, 0, 0, 0, // DEV_NAME "rxe0"
	}
	entry := func(attrs ...byte) []byte {
		table := append([]byte{byte(4 + len(attrs)), 0, 16, 0}, attrs...)
		return slices.Concat(head, []byte{byte(4 + len(table)), 0, 15, 0}, table)
	}
	name := []byte{7, 0, 17, 0, 'p', 'd', 0, 0}
	curr := []byte{12, 0, 18, 0, 1, 0, 0, 0, 0, 0, 0, 0}
	for _, tt := range []struct {
		name string
		b    []byte
	}{
		{"no summary table", head},
		{"entry without a count", entry(name...)},
		{"entry without a name", entry(curr...)},
		{"count of 4 bytes", entry(slices.Concat(name, []byte{8, 0, 18, 0, 1, 0, 0, 0})...)},
		{"entry overruns the table", slices.Concat(head, []byte{12, 0, 15, 0, 40, 0, 16, 0, 0, 0, 0, 0})},
		{"truncated", slices.Concat(head, []byte{40, 0, 15, 0})},
		{"dev index of 2 bytes", slices.Concat([]byte{6, 0, 1, 0, 0, 0, 0, 0}, entry(slices.Concat(name, curr)...)[8:])},
	} {
		t.Run(tt.name, func(t *testing.T) {
			nl := nltest.Dial(func(req netlink.Message) ([]netlink.Message, error) {
				return []netlink.Message{{Header: unix.NlMsghdr{Type: req.Header.Type}, Data: tt.b}}, nil
			})
			defer nl.Close()
			c := &Conn{nl: nl}
			if s, err := c.ResourceSummary(0); err == nil {
				t.Errorf("ResourceSummary accepted it: %v", s)
			} else {
				t.Log(err)
			}
			if s, err := c.ResourceSummaries(); err == nil {
				t.Errorf("ResourceSummaries accepted it: %v", s)
			}
		})
	}
	// The well-formed version of the same bytes passes.
	if _, err := parseResourceSummary(entry(slices.Concat(name, curr)...)); err != nil {
		t.Errorf("well-formed summary: %v", err)
	}
}

func TestResourceSummaryAccessors(t *testing.T) {
	for _, tt := range []struct {
		s     ResourceSummary
		str   string
		pd    uint64
		hasPD bool
	}{
		{rxe0Res, "0: rxe0: pd 2 cq 3 qp 1 cm_id 0 mr 4 ctx 1 srq 0", 2, true},
		{siw0Res, "1: siw0: pd 0 cq 0 qp 0 cm_id 0 mr 0 ctx 0 srq 0", 0, true},
		{ResourceSummary{DevIndex: 4, DevName: "x"}, "4: x:", 0, false},
	} {
		if got := tt.s.String(); got != tt.str {
			t.Errorf("String() = %q, want %q", got, tt.str)
		}
		if pd, ok := tt.s.Count("pd"); pd != tt.pd || ok != tt.hasPD {
			t.Errorf("%s: Count(pd) = %d, %v, want %d, %v", tt.s.DevName, pd, ok, tt.pd, tt.hasPD)
		}
		if _, ok := tt.s.Count("nosuch"); ok {
			t.Errorf("%s: Count(nosuch) reported", tt.s.DevName)
		}
		m := tt.s.Map()
		if len(m) != len(tt.s.Resources) {
			t.Errorf("%s: Map() = %v", tt.s.DevName, m)
		}
		for _, r := range tt.s.Resources {
			if m[r.Name] != r.Count {
				t.Errorf("%s: Map()[%s] = %d, want %d", tt.s.DevName, r.Name, m[r.Name], r.Count)
			}
		}
	}
}

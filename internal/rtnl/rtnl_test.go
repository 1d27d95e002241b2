//go:build linux

package rtnl

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/netlink"
	"github.com/purerdma/purerdma/internal/netlink/nltest"
)

// request is what the fake kernel saw, minus sequence numbers.
type request struct {
	Type, Flags uint16
	Data        []byte
}

const testIndex = 7

// fakeKernel records requests and answers RTM_GETLINK with link testIndex.
func fakeKernel(t *testing.T, reqs *[]request) *Conn {
	nl := nltest.Dial(func(req netlink.Message) ([]netlink.Message, error) {
		*reqs = append(*reqs, request{req.Header.Type, req.Header.Flags, req.Data})
		if req.Header.Type != unix.RTM_GETLINK {
			return nil, nil
		}
		return []netlink.Message{{
			Header: unix.NlMsghdr{Type: unix.RTM_NEWLINK},
			Data:   ifinfomsg(unix.IfInfomsg{Index: testIndex, Flags: unix.IFF_UP}),
		}}, nil
	})
	t.Cleanup(func() { nl.Close() })
	return &Conn{nl: nl}
}

const (
	ack    = unix.NLM_F_REQUEST | unix.NLM_F_ACK
	create = ack | unix.NLM_F_CREATE | unix.NLM_F_EXCL
)

// The expected bytes are for a little-endian host; see skipBigEndian.
var (
	noIfinfo   = make([]byte, 16)
	veth0      = []byte{10, 0, 3, 0, 'v', 'e', 't', 'h', '0', 0, 0, 0} // IFLA_IFNAME
	getVeth0   = request{unix.RTM_GETLINK, ack, cat(noIfinfo, veth0)}
	ifinfoUp   = []byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}
	ifinfoDown = []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}
)

func cat(bs ...[]byte) []byte {
	var b []byte
	for _, x := range bs {
		b = append(b, x...)
	}
	return b
}

func TestRequests(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("expected bytes are little-endian")
	}
	for _, tt := range []struct {
		name string
		call func(c *Conn) error
		want []request
	}{
		{
			name: "AddVeth",
			call: func(c *Conn) error { return c.AddVeth("veth0", "veth1") },
			want: []request{{unix.RTM_NEWLINK, create, cat(
				noIfinfo,
				veth0,
				[]byte{52, 0, 18, 0x80}, // IFLA_LINKINFO, nested
				[]byte{9, 0, 1, 0, 'v', 'e', 't', 'h', 0, 0, 0, 0}, // IFLA_INFO_KIND
				[]byte{36, 0, 2, 0x80},                             // IFLA_INFO_DATA, nested
				[]byte{32, 0, 1, 0},                                // VETH_INFO_PEER
				noIfinfo,
				[]byte{10, 0, 3, 0, 'v', 'e', 't', 'h', '1', 0, 0, 0},
			)}},
		},
		{
			name: "SetUp",
			call: func(c *Conn) error { return c.SetUp("veth0") },
			want: []request{{unix.RTM_SETLINK, ack, cat(ifinfoUp, veth0)}},
		},
		{
			name: "SetDown",
			call: func(c *Conn) error { return c.SetDown("veth0") },
			want: []request{{unix.RTM_SETLINK, ack, cat(ifinfoDown, veth0)}},
		},
		{
			name: "DelLink",
			call: func(c *Conn) error { return c.DelLink("veth0") },
			want: []request{{unix.RTM_DELLINK, ack, cat(noIfinfo, veth0)}},
		},
		{
			name: "AddAddr IPv4",
			call: func(c *Conn) error { return c.AddAddr("veth0", netip.MustParsePrefix("192.168.77.1/24")) },
			want: []request{getVeth0, {unix.RTM_NEWADDR, create, cat(
				[]byte{unix.AF_INET, 24, 0, unix.RT_SCOPE_UNIVERSE, testIndex, 0, 0, 0},
				[]byte{8, 0, 2, 0, 192, 168, 77, 1}, // IFA_LOCAL
				[]byte{8, 0, 1, 0, 192, 168, 77, 1}, // IFA_ADDRESS
			)}},
		},
		{
			name: "AddAddr IPv6",
			call: func(c *Conn) error { return c.AddAddr("veth0", netip.MustParsePrefix("fd00:77::1/64")) },
			want: []request{getVeth0, {unix.RTM_NEWADDR, create, cat(
				[]byte{unix.AF_INET6, 64, 0, unix.RT_SCOPE_UNIVERSE, testIndex, 0, 0, 0},
				[]byte{20, 0, 2, 0, 0xfd, 0, 0, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
				[]byte{20, 0, 1, 0, 0xfd, 0, 0, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
			)}},
		},
		{
			name: "SetNetem loss and delay",
			call: func(c *Conn) error { return c.SetNetem("veth0", Netem{Loss: 10, Delay: 20 * time.Millisecond}) },
			want: []request{getVeth0, {unix.RTM_NEWQDISC, ack | unix.NLM_F_CREATE | unix.NLM_F_REPLACE, cat(
				[]byte{0, 0, 0, 0, testIndex, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, // tcmsg, parent TC_H_ROOT
				[]byte{10, 0, 1, 0, 'n', 'e', 't', 'e', 'm', 0, 0, 0},                                  // TCA_KIND
				[]byte{28, 0, 2, 0},            // TCA_OPTIONS: struct tc_netem_qopt
				[]byte{0xb4, 0xc4, 0x04, 0},    // latency: 20 ms in 64 ns ticks, 312500
				[]byte{0xe8, 0x03, 0, 0},       // limit 1000
				[]byte{0x99, 0x99, 0x99, 0x19}, // loss: 10% of 2^32-1
				make([]byte, 12),               // gap, duplicate, jitter
			)}},
		},
		{
			name: "DelRootQdisc",
			call: func(c *Conn) error { return c.DelRootQdisc("veth0") },
			want: []request{getVeth0, {unix.RTM_DELQDISC, ack, []byte{0, 0, 0, 0, testIndex, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []request
			c := fakeKernel(t, &got)
			if err := tt.call(c); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	for _, tt := range []struct {
		name   string
		call   func(c *Conn) error
		errno  unix.Errno // what the fake kernel answers
		wantIs error
	}{
		{"AddVeth exists", func(c *Conn) error { return c.AddVeth("veth0", "veth1") }, unix.EEXIST, unix.EEXIST},
		{"SetUp missing", func(c *Conn) error { return c.SetUp("nope") }, unix.ENODEV, unix.ENODEV},
		{"DelLink missing", func(c *Conn) error { return c.DelLink("nope") }, unix.ENODEV, unix.ENODEV},
		{"AddAddr missing link", func(c *Conn) error {
			return c.AddAddr("nope", netip.MustParsePrefix("10.0.0.1/8"))
		}, unix.ENODEV, unix.ENODEV},
		{"AddAddr invalid prefix", func(c *Conn) error { return c.AddAddr("veth0", netip.Prefix{}) }, 0, nil},
		{"SetNetem loss over 100%", func(c *Conn) error { return c.SetNetem("veth0", Netem{Loss: 101}) }, 0, unix.EINVAL},
		{"SetNetem negative delay", func(c *Conn) error { return c.SetNetem("veth0", Netem{Delay: -time.Second}) }, 0, unix.EINVAL},
		{"SetNetem missing link", func(c *Conn) error { return c.SetNetem("nope", Netem{Loss: 1}) }, unix.ENODEV, unix.ENODEV},
		{"DelRootQdisc missing link", func(c *Conn) error { return c.DelRootQdisc("nope") }, unix.ENODEV, unix.ENODEV},
	} {
		t.Run(tt.name, func(t *testing.T) {
			nl := nltest.Dial(func(netlink.Message) ([]netlink.Message, error) {
				if tt.errno == 0 {
					t.Error("request sent for an invalid call")
					return nil, nil
				}
				return nil, tt.errno
			})
			defer nl.Close()
			err := tt.call(&Conn{nl: nl})
			if err == nil {
				t.Fatal("no error")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %q does not match %v", err, tt.wantIs)
			}
		})
	}
}

// TestAddAddrNoIndex covers a kernel reply without a usable index.
func TestAddAddrNoIndex(t *testing.T) {
	nl := nltest.Dial(func(req netlink.Message) ([]netlink.Message, error) {
		if req.Header.Type == unix.RTM_GETLINK {
			return []netlink.Message{{Header: unix.NlMsghdr{Type: unix.RTM_NEWLINK}, Data: []byte{1, 2}}}, nil
		}
		t.Errorf("unexpected request type %d", req.Header.Type)
		return nil, nil
	})
	defer nl.Close()
	if err := (&Conn{nl: nl}).AddAddr("veth0", netip.MustParsePrefix("10.0.0.1/8")); err == nil {
		t.Fatal("no error")
	}
}

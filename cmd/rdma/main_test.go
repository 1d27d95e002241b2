package main

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/rdmanl"
	"github.com/purerdma/purerdma/uverbs"
)

// fakeConn stands in for the kernel and records changes.
type fakeConn struct {
	devs  []rdmanl.Device
	ports []rdmanl.Port
	sums  []rdmanl.ResourceSummary
	calls []string
	err   error
}

func (f *fakeConn) Devices() ([]rdmanl.Device, error) { return f.devs, f.err }
func (f *fakeConn) Ports() ([]rdmanl.Port, error)     { return f.ports, f.err }
func (f *fakeConn) Close() error                      { return nil }
func (f *fakeConn) ResourceSummaries() ([]rdmanl.ResourceSummary, error) {
	return f.sums, f.err
}
func (f *fakeConn) LinkAdd(name, linkType, netdev string) error {
	f.calls = append(f.calls, "add "+name+" "+linkType+" "+netdev)
	return f.err
}
func (f *fakeConn) LinkDel(name string) error {
	f.calls = append(f.calls, "del "+name)
	return f.err
}

func testConn() *fakeConn {
	return &fakeConn{
		devs: []rdmanl.Device{
			{Index: 0, Name: "rxe0", NodeGUID: 0x505400fffe123456, SysImageGUID: 0x505400fffe123456,
				NodeType: 1, Protocol: "roce", Ports: 1},
			{Index: 1, Name: "siw0", NodeGUID: 0x0252540012345700, SysImageGUID: 0x0252540012345700,
				FWVersion: "0.0.0", NodeType: 4, Ports: 1},
		},
		ports: []rdmanl.Port{
			{DevIndex: 0, DevName: "rxe0", Port: 1, State: 4, PhysState: 5, NetdevName: "veth0", NetdevIndex: 3},
			{DevIndex: 1, DevName: "siw0", Port: 1, State: 4, PhysState: 5, NetdevName: "veth2", NetdevIndex: 5},
			{DevIndex: 2, DevName: "mlx5_0", Port: 1, State: 1, PhysState: 3},
			{DevIndex: 2, DevName: "mlx5_0", Port: 2, State: 2, PhysState: 2},
		},
		sums: []rdmanl.ResourceSummary{
			{DevIndex: 0, DevName: "rxe0", Resources: []rdmanl.Resource{{Name: "pd", Count: 1}, {Name: "cq", Count: 2}, {Name: "qp", Count: 1}, {Name: "cm_id", Count: 0}, {Name: "mr", Count: 3}, {Name: "ctx", Count: 1}, {Name: "srq", Count: 0}}},
			{DevIndex: 1, DevName: "siw0", Resources: []rdmanl.Resource{{Name: "pd", Count: 0}, {Name: "cq", Count: 0}, {Name: "qp", Count: 0}, {Name: "cm_id", Count: 2}, {Name: "mr", Count: 0}, {Name: "ctx", Count: 0}, {Name: "srq", Count: 0}}},
		},
	}
}

// fakeCounters are rxe0's two counters; siw0 has none, mlx5_0 fails.
func fakeCounters(dev string, port int) ([]uverbs.Counter, error) {
	switch dev {
	case "rxe0":
		return []uverbs.Counter{{Name: "rcvd_pkts", Value: 7}, {Name: "sent_pkts", Value: 12}}, nil
	case "siw0":
		return nil, nil
	}
	return nil, syscall.EACCES
}

const (
	rxe0Dev  = "0: rxe0: node_type ca protocol roce node_guid 5054:00ff:fe12:3456 sys_image_guid 5054:00ff:fe12:3456\n"
	siw0Dev  = "1: siw0: node_type rnic fw 0.0.0 node_guid 0252:5400:1234:5700 sys_image_guid 0252:5400:1234:5700\n"
	rxe0Link = "link rxe0/1 state ACTIVE physical_state LINK_UP netdev veth0\n"
	siw0Link = "link siw0/1 state ACTIVE physical_state LINK_UP netdev veth2\n"
	mlx1Link = "link mlx5_0/1 state DOWN physical_state DISABLED\n"
	mlx2Link = "link mlx5_0/2 state INIT physical_state POLLING\n"
	rxe0Res  = "0: rxe0: pd 1 cq 2 qp 1 cm_id 0 mr 3 ctx 1 srq 0\n"
	siw0Res  = "1: siw0: pd 0 cq 0 qp 0 cm_id 2 mr 0 ctx 0 srq 0\n"
	rxe0Stat = "link rxe0/1 rcvd_pkts 7 sent_pkts 12\n"
	siw0Stat = "link siw0/1\n"
)

func TestRun(t *testing.T) {
	for _, tt := range []struct {
		args      string
		want      string
		wantCalls []string
		wantErr   string
	}{
		{args: "", want: usage},
		{args: "help", want: usage},
		{args: "dev", want: rxe0Dev + siw0Dev},
		{args: "dev show", want: rxe0Dev + siw0Dev},
		{args: "d s siw0", want: siw0Dev},
		{args: "dev list rxe0", want: rxe0Dev},
		{args: "dev show mlx4_0", wantErr: "mlx4_0: RDMA device not found"},
		{args: "dev show rxe0 extra", wantErr: `unexpected "extra"`},
		{args: "link", want: rxe0Link + siw0Link + mlx1Link + mlx2Link},
		{args: "link show", want: rxe0Link + siw0Link + mlx1Link + mlx2Link},
		{args: "l s mlx5_0", want: mlx1Link + mlx2Link},
		{args: "link show mlx5_0/2", want: mlx2Link},
		{args: "link show mlx5_0/3", wantErr: "mlx5_0/3: RDMA device not found"},
		{args: "link show mlx5_0/x", wantErr: `invalid port "x"`},
		{args: "link show mlx5_0/0", wantErr: `invalid port "0"`},
		{args: "link add rxe1 type rxe netdev veth4", wantCalls: []string{"add rxe1 rxe veth4"}},
		{args: "l a siw1 t siw n veth6", wantCalls: []string{"add siw1 siw veth6"}},
		{args: "link add rxe1 netdev veth4 type rxe", wantErr: "usage: rdma link add"},
		{args: "link add rxe1 type rxe", wantErr: "usage: rdma link add"},
		{args: "link delete rxe1", wantCalls: []string{"del rxe1"}},
		{args: "link del", wantErr: "usage: rdma link delete"},
		{args: "system", wantErr: `unknown object "system"`},
		{args: "resource", want: rxe0Res + siw0Res},
		{args: "res show", want: rxe0Res + siw0Res},
		{args: "r s siw0", want: siw0Res},
		{args: "res show mlx4_0", wantErr: "mlx4_0: RDMA device not found"},
		{args: "res show rxe0 extra", wantErr: `unexpected "extra"`},
		{args: "statistic show link rxe0/1", want: rxe0Stat},
		{args: "stat show link siw0", want: siw0Stat},
		{args: "s s l rxe0", want: rxe0Stat},
		{args: "stat show link rxe0/2", wantErr: "rxe0/2: RDMA device not found"},
		{args: "stat show link rxe0/x", wantErr: `invalid port "x"`},
		{args: "stat show link", wantErr: "usage: rdma statistic show"},
		{args: "stat show dev rxe0", wantErr: "usage: rdma statistic show"},
		{args: "stat show link mlx5_0", wantErr: "permission denied"},
		{args: "stat show", wantErr: "permission denied"}, // mlx5_0's ports fail
		{args: "link frobnicate", wantErr: `unknown link command "frobnicate"`},
	} {
		t.Run(tt.args, func(t *testing.T) {
			var out strings.Builder
			f := testConn()
			tl := &tool{w: &out, dial: func() (conn, error) { return f, nil }, counters: fakeCounters}
			err := tl.run(strings.Fields(tt.args))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCalls, f.calls); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	f := &fakeConn{err: syscall.EPERM}
	tl := &tool{w: new(strings.Builder), dial: func() (conn, error) { return f, nil }}
	if err := tl.run([]string{"link", "add", "rxe1", "type", "rxe", "netdev", "veth4"}); !errors.Is(err, syscall.EPERM) {
		t.Errorf("link add: %v, want EPERM", err)
	}
	tl.dial = func() (conn, error) { return nil, syscall.EPROTONOSUPPORT }
	if err := tl.run([]string{"dev"}); !errors.Is(err, syscall.EPROTONOSUPPORT) {
		t.Errorf("dev without RDMA netlink: %v, want EPROTONOSUPPORT", err)
	}
}

func TestFormatGUID(t *testing.T) {
	for _, tt := range []struct {
		g    uint64
		want string
	}{
		{0, "0000:0000:0000:0000"},
		{0x505400fffe123456, "5054:00ff:fe12:3456"},
		{0xffffffffffffffff, "ffff:ffff:ffff:ffff"},
		{0x0001000200030004, "0001:0002:0003:0004"},
	} {
		if got := formatGUID(tt.g); got != tt.want {
			t.Errorf("formatGUID(%#x) = %q, want %q", tt.g, got, tt.want)
		}
	}
}

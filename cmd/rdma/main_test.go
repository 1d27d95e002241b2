package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/rdmanl"
)

// fakeConn stands in for the kernel and records changes.
type fakeConn struct {
	devs  []rdmanl.Device
	ports []rdmanl.Port
	calls []string
	err   error
}

func (f *fakeConn) Devices() ([]rdmanl.Device, error) { return f.devs, f.err }
func (f *fakeConn) Ports() ([]rdmanl.Port, error)     { return f.ports, f.err }
func (f *fakeConn) Close() error                      { return nil }
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
	}
}

const (
	rxe0Dev  = "0: rxe0: node_type ca protocol roce node_guid 5054:00ff:fe12:3456 sys_image_guid 5054:00ff:fe12:3456\n"
	siw0Dev  = "1: siw0: node_type rnic fw 0.0.0 node_guid 0252:5400:1234:5700 sys_image_guid 0252:5400:1234:5700\n"
	rxe0Link = "link rxe0/1 state ACTIVE physical_state LINK_UP netdev veth0\n"
	siw0Link = "link siw0/1 state ACTIVE physical_state LINK_UP netdev veth2\n"
	mlx1Link = "link mlx5_0/1 state DOWN physical_state DISABLED\n"
	mlx2Link = "link mlx5_0/2 state INIT physical_state POLLING\n"
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
		{args: "resource", wantErr: `unknown object "resource"`},
		{args: "link frobnicate", wantErr: `unknown link command "frobnicate"`},
	} {
		t.Run(tt.args, func(t *testing.T) {
			var out strings.Builder
			f := testConn()
			tl := &tool{w: &out, dial: func() (conn, error) { return f, nil }}
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
	f := &fakeConn{err: unix.EPERM}
	tl := &tool{w: new(strings.Builder), dial: func() (conn, error) { return f, nil }}
	if err := tl.run([]string{"link", "add", "rxe1", "type", "rxe", "netdev", "veth4"}); !errors.Is(err, unix.EPERM) {
		t.Errorf("link add: %v, want EPERM", err)
	}
	tl.dial = func() (conn, error) { return nil, unix.EPROTONOSUPPORT }
	if err := tl.run([]string{"dev"}); !errors.Is(err, unix.EPROTONOSUPPORT) {
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

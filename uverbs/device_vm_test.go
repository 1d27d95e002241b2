package uverbs

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestDiscovery checks that netlink and sysfs both find each test device,
// agree on what it is, and that its character device opens.
func TestDiscovery(t *testing.T) {
	testenv.Devices(t) // skips on a host without RDMA before netlink fails
	nl, err := netlinkDevices()
	if err != nil {
		t.Fatalf("netlink: %v", err)
	}
	sys, err := sysfsDevices(sysfsRoot)
	if err != nil {
		t.Fatalf("sysfs: %v", err)
	}
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		fromNL := find(t, "netlink", nl, d.Name)
		fromSys := find(t, "sysfs", sys, d.Name)
		if fromNL.Driver.String() != d.Driver {
			t.Errorf("netlink driver = %v, want %s", fromNL.Driver, d.Driver)
		}
		if got, err := DeviceByName(d.Name); err != nil || got != fromNL {
			t.Errorf("DeviceByName(%q) = %+v, %v; want %+v", d.Name, got, err, fromNL)
		}
		// sysfs cannot know the index, and guesses the driver from the
		// name: a guess a renamed device (rdma-core's udev rules make
		// mlx5_0 rocep1s0f0 on some distributions) defeats.
		fromSys.Index = fromNL.Index
		if !strings.HasPrefix(d.Name, fromNL.Driver.String()) {
			fromSys.Driver = fromNL.Driver
		}
		if diff := cmp.Diff(fromNL, fromSys); diff != "" {
			t.Errorf("netlink and sysfs disagree (-netlink +sysfs):\n%s", diff)
		}
		if fromNL.ABIVersion == 0 {
			t.Errorf("ABI version 0")
		}
		t.Logf("%s: driver %v, %s (ABI %d), node GUID %v, node type %v",
			fromNL.Name, fromNL.Driver, fromNL.Path(), fromNL.ABIVersion, fromNL.NodeGUID, fromNL.NodeType)

		f, err := os.OpenFile(fromNL.Path(), os.O_RDWR|syscall.O_CLOEXEC, 0)
		if err != nil {
			t.Fatalf("open %s: %v", fromNL.Path(), err)
		}
		if err := f.Close(); err != nil {
			t.Errorf("close %s: %v", fromNL.Path(), err)
		}
	})
}

func TestDeviceByNameMissing(t *testing.T) {
	testenv.Devices(t) // only meaningful where the kernel has RDMA
	if _, err := DeviceByName("nosuchdev0"); !errors.Is(err, ErrNoDevice) {
		t.Errorf("DeviceByName(nosuchdev0) error = %v, want ErrNoDevice", err)
	}
}

func find(t *testing.T, source string, devs []Device, name string) Device {
	t.Helper()
	for _, d := range devs {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("%s does not list %s (it lists %+v)", source, name, devs)
	return Device{}
}

package rdmanl_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/rdmanl"
	"github.com/purerdma/purerdma/internal/rtnl"
	"github.com/purerdma/purerdma/internal/testenv"
)

func dial(t *testing.T) *rdmanl.Conn {
	t.Helper()
	c, err := rdmanl.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestLinkVM adds an rxe device on a fresh veth, finds it everywhere the
// kernel lists it, and deletes it again. It changes the machine, so it
// runs only in the test VM.
func TestLinkVM(t *testing.T) {
	testenv.RequireVM(t)
	const name, veth, peer = "rxetest0", "rxetest0v", "rxetest0p"

	r, err := rtnl.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.AddVeth(veth, peer); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.DelLink(veth) })
	for _, n := range []string{veth, peer} {
		if err := r.SetUp(n); err != nil {
			t.Fatal(err)
		}
	}

	c := dial(t)
	if err := c.LinkAdd(name, "rxe", veth); err != nil {
		t.Fatal(err)
	}
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			c.LinkDel(name)
		}
	})

	devs, err := c.Devices()
	if err != nil {
		t.Fatal(err)
	}
	var dev *rdmanl.Device
	for i := range devs {
		if devs[i].Name == name {
			dev = &devs[i]
		}
	}
	if dev == nil {
		t.Fatalf("Devices() = %+v, want %s among them", devs, name)
	}
	t.Logf("device: %+v", *dev)
	if dev.Ports != 1 || dev.Protocol != "roce" || dev.NodeType != 1 {
		t.Errorf("device %+v, want 1 port, protocol roce, node type 1 (CA)", *dev)
	}

	port := findPort(t, c, name)
	if port == nil {
		t.Fatalf("Ports() has no port of %s", name)
	}
	if port.NetdevName != veth || port.DevIndex != dev.Index || port.Port != 1 {
		t.Errorf("port %+v, want port 1 of device %d on %s", *port, dev.Index, veth)
	}
	t.Log(port)

	cd, err := c.Chardev(dev.Index, "uverbs")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("uverbs: %+v", cd)
	if cd.DriverID != abi.RDMA_DRIVER_RXE {
		t.Errorf("driver ID %d, want %d (rxe)", cd.DriverID, abi.RDMA_DRIVER_RXE)
	}
	checkChardevSysfs(t, cd, name)

	// rxe takes one device per netdev, and a netdev must exist.
	if err := c.LinkAdd(name+"b", "rxe", veth); !errors.Is(err, unix.EEXIST) {
		t.Errorf("second rxe on %s: %v, want EEXIST", veth, err)
	}
	if err := c.LinkAdd(name+"c", "rxe", "nosuchnetdev0"); !errors.Is(err, unix.ENODEV) {
		t.Errorf("rxe on a missing netdev: %v, want ENODEV", err)
	}

	if err := c.LinkDel(name); err != nil {
		t.Fatal(err)
	}
	deleted = true
	if _, err := c.DeviceByName(name); !errors.Is(err, rdmanl.ErrNotFound) {
		t.Errorf("DeviceByName after LinkDel: %v, want ErrNotFound", err)
	}
	if p := findPort(t, c, name); p != nil {
		t.Errorf("Ports() still lists %v after LinkDel", p)
	}
	if err := c.LinkDel(name); !errors.Is(err, rdmanl.ErrNotFound) {
		t.Errorf("second LinkDel: %v, want ErrNotFound", err)
	}
}

// TestDevicesVM checks, for each device the VM set up, that RDMA netlink
// lists its port on the right netdev and names its driver.
func TestDevicesVM(t *testing.T) {
	devs := testenv.Devices(t)
	c := dial(t)
	for _, d := range devs {
		t.Run(d.Name, func(t *testing.T) {
			p := findPort(t, c, d.Name)
			if p == nil {
				t.Fatalf("Ports() has no port of %s", d.Name)
			}
			t.Log(p)
			// An InfiniBand port has no netdev in netlink: testenv found
			// its IPoIB interface through the PCI function.
			if d.Netdev != "" && d.Link != testenv.LinkIB && p.NetdevName != d.Netdev {
				t.Errorf("%s is on netdev %q, want %q", d.Name, p.NetdevName, d.Netdev)
			}
			if d.Netdev != "" && d.Link != testenv.LinkIB && !strings.HasSuffix(p.String(), " netdev "+d.Netdev) {
				t.Errorf("String() = %q, want it to end in the netdev", p)
			}

			cd, err := c.Chardev(p.DevIndex, "uverbs")
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]uint32{"rxe": abi.RDMA_DRIVER_RXE, "siw": abi.RDMA_DRIVER_SIW}
			if id, ok := want[d.Driver]; ok && cd.DriverID != id {
				t.Errorf("driver ID %d, want %d (%s)", cd.DriverID, id, d.Driver)
			}
			checkChardevSysfs(t, cd, d.Name)
		})
	}
}

func findPort(t *testing.T, c *rdmanl.Conn, dev string) *rdmanl.Port {
	t.Helper()
	ports, err := c.Ports()
	if err != nil {
		t.Fatal(err)
	}
	for i := range ports {
		if ports[i].DevName == dev {
			return &ports[i]
		}
	}
	return nil
}

// checkChardevSysfs compares what netlink says about a uverbs device with
// what sysfs says.
func checkChardevSysfs(t *testing.T, cd rdmanl.Chardev, ibdev string) {
	t.Helper()
	dir := filepath.Join("/sys/class/infiniband_verbs", cd.Name)
	for file, want := range map[string]string{
		"dev":         fmt.Sprintf("%d:%d", cd.Major, cd.Minor),
		"abi_version": fmt.Sprint(cd.ABI),
		"ibdev":       ibdev,
	} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Error(err)
			continue
		}
		if got := strings.TrimSpace(string(b)); got != want {
			t.Errorf("%s/%s = %q, netlink says %q", dir, file, got, want)
		}
	}
}

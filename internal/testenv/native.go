package testenv

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/purerdma/purerdma/internal/provider/drivers"
	"github.com/purerdma/purerdma/internal/rdmanl"
)

// A native run (make test-native, hack/native.sh) tests on the host's own
// devices. The script names them in PURERDMA_DEV, comma- or
// space-separated (every device of the host when it is empty), and this
// file reads the rest from the kernel as the VM's init would have set it:
// the driver from the uverbs character device's driver ID, port 1's
// protocol, network device and state from RDMA netlink, and the first
// IPv4 address of that network device. Anything missing is an error,
// which Devices turns into a failure: a native run is asked for, so a
// device it cannot use is not a reason to skip.

// sysClassIB lists the host's RDMA devices.
var sysClassIB = "/sys/class/infiniband" // tests point it elsewhere

var native struct {
	once sync.Once
	devs []Dev
	err  error
}

// nativeDevices returns the devices under test, found once per process.
func nativeDevices() ([]Dev, error) {
	native.once.Do(func() { native.devs, native.err = findNative(os.Getenv("PURERDMA_DEV")) })
	return native.devs, native.err
}

// nativeNames lists the devices under test: those PURERDMA_DEV names, in
// its order, or every device of the host, sorted.
func nativeNames(list string) ([]string, error) {
	entries, err := os.ReadDir(sysClassIB)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var all []string
	for _, e := range entries {
		all = append(all, e.Name())
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no RDMA device in %s", sysClassIB)
	}
	slices.Sort(all)
	want := strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' })
	if len(want) == 0 {
		return all, nil
	}
	for _, n := range want {
		if !slices.Contains(all, n) {
			return nil, fmt.Errorf("PURERDMA_DEV names %s, which %s does not list (it has %s)", n, sysClassIB, strings.Join(all, ", "))
		}
	}
	return want, nil
}

// findNative describes the devices under test.
func findNative(list string) ([]Dev, error) {
	devs, err := describeAll(list)
	if err != nil && list == "" {
		err = fmt.Errorf("%w (PURERDMA_DEV names the devices to test; it is empty, so every device is)", err)
	}
	return devs, err
}

// describeAll describes the devices list names, or every device.
func describeAll(list string) ([]Dev, error) {
	names, err := nativeNames(list)
	if err != nil {
		return nil, err
	}
	c, err := rdmanl.Dial()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	nlDevs, err := c.Devices()
	if err != nil {
		return nil, err
	}
	ports, err := c.Ports()
	if err != nil {
		return nil, err
	}
	var devs []Dev
	for _, name := range names {
		i := slices.IndexFunc(nlDevs, func(d rdmanl.Device) bool { return d.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("%s: RDMA netlink does not list it", name)
		}
		j := slices.IndexFunc(ports, func(p rdmanl.Port) bool { return p.DevName == name && p.Port == 1 })
		if j < 0 {
			return nil, fmt.Errorf("%s: RDMA netlink lists no port 1", name)
		}
		d, err := describeNative(c, nlDevs[i], ports[j])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// portActive is IB_PORT_ACTIVE, rdmanl.Port.State's value for a port
// that carries traffic.
const portActive = 4

// describeNative fills a Dev from what the kernel says of the device and
// its port 1.
func describeNative(c *rdmanl.Conn, nd rdmanl.Device, p rdmanl.Port) (Dev, error) {
	d := Dev{Name: nd.Name, Netdev: p.NetdevName}
	if cd, err := c.Chardev(nd.Index, "uverbs"); err == nil {
		d.Driver = drivers.Name(cd.DriverID)
	}
	if d.Driver == "" {
		// A kernel that does not report the ID: the default names of
		// the drivers' devices start with the provider's name.
		d.Driver = drivers.Name(drivers.FromDeviceName(nd.Name))
	}
	switch {
	case nd.NodeType == 4 || nd.Protocol == "iw": // RDMA_NODE_RNIC
		d.Link = LinkIWARP
	case nd.Protocol == "roce":
		d.Link = LinkRoCE
	case nd.Protocol == "ib":
		d.Link = LinkIB
	default:
		// No protocol attribute: port 1's link layer says it.
		ll, _ := os.ReadFile(filepath.Join(sysClassIB, nd.Name, "ports/1/link_layer"))
		switch strings.TrimSpace(string(ll)) {
		case "Ethernet":
			d.Link = LinkRoCE
		case "InfiniBand":
			d.Link = LinkIB
		}
	}
	if p.State != portActive {
		return Dev{}, fmt.Errorf("port 1 is not ACTIVE (%s): bring its link up", p)
	}
	if d.Netdev == "" {
		// An InfiniBand port has no netdev of its own in netlink; its
		// IPoIB interfaces hang off the same PCI function.
		ents, _ := os.ReadDir(filepath.Join(sysClassIB, nd.Name, "device", "net"))
		if len(ents) == 0 {
			return Dev{}, errors.New("no network device on port 1 (RDMA netlink names none, and the PCI function has no IPoIB interface)")
		}
		d.Netdev = ents[0].Name()
	}
	addr, err := ipv4Of(d.Netdev)
	if err != nil {
		return Dev{}, err
	}
	d.Addr = addr
	return d, nil
}

// ipv4Of returns the first IPv4 address of the network device name that
// is not link-local.
func ipv4Of(name string) (string, error) {
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return "", fmt.Errorf("network device %s: %w", name, err)
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return "", fmt.Errorf("network device %s: %w", name, err)
	}
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		if ip4 := ipn.IP.To4(); ip4 != nil && !ip4.IsLinkLocalUnicast() {
			return ip4.String(), nil
		}
	}
	return "", fmt.Errorf("network device %s has no IPv4 address: the tests connect through one (ip addr add ... dev %s)", name, name)
}

// nativeSelected reports whether the leak check should count device
// name's resources: in a native run only the devices under test, whose
// objects are the tests'; other devices of the host may be in use.
func nativeSelected(name string) bool {
	if !Native() {
		return true
	}
	devs, err := nativeDevices()
	if err != nil {
		return true
	}
	return slices.ContainsFunc(devs, func(d Dev) bool { return d.Name == name })
}

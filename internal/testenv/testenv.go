// Package testenv finds the RDMA devices that integration tests run on.
//
// Every test that needs a device goes through this package, so that the
// rule "a missing device is a skip on a bare host and a failure in the VM"
// lives in one place. The VM's init marks the guest with PURERDMA_VM=1 and
// PURERDMA_VM_ARCH, and names the devices it created (see hack/vm): rxe0
// and siw0 in amd64 guests, rxe0 alone in arm64 guests. On a host that has RDMA
// devices, `make test-native` sets PURERDMA_NATIVE=1 and the tests use
// whatever /sys/class/infiniband lists.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Dev is one device a test may use.
type Dev struct {
	Name   string // RDMA device name, e.g. "rxe0"
	Driver string // "rxe" or "siw" (the link type), "" when unknown
	Netdev string // the network device it sits on, e.g. "veth0"
	Addr   string // an IPv4 address of Netdev, "" when unknown
}

// InVM reports whether the test runs inside the purerdma test VM.
func InVM() bool { return os.Getenv("PURERDMA_VM") == "1" }

// Native reports whether the tests were asked to run on the host's own
// RDMA devices (make test-native).
func Native() bool { return os.Getenv("PURERDMA_NATIVE") == "1" }

// Arch is the architecture the VM runs, or "" outside the VM.
func Arch() string { return os.Getenv("PURERDMA_VM_ARCH") }

// RequireVM skips the test unless it runs inside the test VM. Use it for
// tests that change the system (links, modules) and so must not run on a
// developer's host.
func RequireVM(t testing.TB) {
	t.Helper()
	if !InVM() {
		t.Skip("needs the purerdma test VM (run it with make test)")
	}
}

// vmDrivers are the drivers of the devices the VM's init creates: rxe on
// every architecture, siw on amd64 only, because hack/vm builds siw.ko out
// of tree for amd64 alone.
func vmDrivers() []string {
	if Arch() == "amd64" {
		return []string{"rxe", "siw"}
	}
	return []string{"rxe"}
}

// Devices returns the devices to test on. In the VM that is rxe0 and, on
// amd64, siw0 as init created them, and a missing one fails the test.
// Elsewhere the test is skipped unless make test-native asked for the
// host's devices. Every test that asks for a device gets a leak check
// (CheckLeaks): call Devices, Device or Run before making objects.
func Devices(t testing.TB) []Dev {
	t.Helper()
	CheckLeaks(t)
	switch {
	case InVM():
		var devs []Dev
		for _, driver := range vmDrivers() {
			devs = append(devs, vmDevice(t, driver))
		}
		return devs
	case Native():
		devs := hostDevices()
		if len(devs) == 0 {
			t.Fatal("make test-native: no RDMA device in /sys/class/infiniband")
		}
		return devs
	default:
		t.Skip("no RDMA device: run the integration tests in the VM with make test")
		return nil
	}
}

// Device returns the device with the given driver ("rxe" or "siw"). In the
// VM a missing device fails the test, except siw in a non-amd64 guest,
// which has none: that test skips saying so. Elsewhere it is a skip.
func Device(t testing.TB, driver string) Dev {
	t.Helper()
	for _, d := range Devices(t) {
		if d.Driver == driver {
			return d
		}
	}
	if InVM() && !slices.Contains(vmDrivers(), driver) {
		t.Skip(absentDriver(driver))
	}
	if InVM() {
		t.Fatalf("no %s device in the VM", driver)
	}
	t.Skipf("no %s device on this host", driver)
	return Dev{}
}

// Run runs f as one subtest per device, named after the device, so that the
// test output says which device each result belongs to. In a guest without
// siw, a skipped "siw" subtest says why it did not run there.
func Run(t *testing.T, f func(t *testing.T, d Dev)) {
	t.Helper()
	for _, d := range Devices(t) {
		t.Run(d.Name, func(t *testing.T) { f(t, d) })
	}
	if InVM() && !slices.Contains(vmDrivers(), "siw") {
		t.Run("siw", func(t *testing.T) { t.Skip(absentDriver("siw")) })
	}
}

func absentDriver(driver string) string {
	return fmt.Sprintf("no %s device in %s guests: hack/vm builds %s.ko for amd64 guests only", driver, Arch(), driver)
}

// skipForeignC skips a test that needs the C reference tools in a guest
// they cannot run in: they are the host's amd64 binaries, and hack/vm packs
// them into amd64 guests only.
func skipForeignC(t testing.TB) {
	t.Helper()
	if InVM() && os.Getenv("PURERDMA_CTOOLS") != "1" && Arch() != "amd64" {
		t.Skipf("interop with C runs on amd64 only: the C tools are amd64 binaries, this guest is %s", Arch())
	}
}

// vmDevice reads the device that the VM's init created for driver and checks
// that the kernel really has it.
func vmDevice(t testing.TB, driver string) Dev {
	t.Helper()
	key := "PURERDMA_" + strings.ToUpper(driver)
	d := Dev{
		Name:   os.Getenv(key),
		Driver: driver,
		Netdev: os.Getenv(key + "_NETDEV"),
		Addr:   os.Getenv(key + "_ADDR"),
	}
	if d.Name == "" {
		t.Fatalf("VM init did not name a %s device (%s is empty)", driver, key)
	}
	if _, err := os.Stat(filepath.Join("/sys/class/infiniband", d.Name)); err != nil {
		t.Fatalf("%s device %s is missing in the VM: %v", driver, d.Name, err)
	}
	return d
}

// hostDevices lists /sys/class/infiniband. The driver is guessed from the
// name prefix, as libibverbs does for software devices.
func hostDevices() []Dev {
	entries, _ := os.ReadDir("/sys/class/infiniband")
	var devs []Dev
	for _, e := range entries {
		d := Dev{Name: e.Name()}
		for _, p := range []string{"rxe", "siw"} {
			if strings.HasPrefix(d.Name, p) {
				d.Driver = p
			}
		}
		devs = append(devs, d)
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i].Name < devs[j].Name })
	return devs
}

// projectBin is where the VM puts purerdma's own commands, last in PATH.
const projectBin = "/opt/purerdma/bin/"

// CTool returns the path of a C reference program from rdma-core or
// perftest (ibv_devinfo, rping, ib_write_lat...). The VM image carries them
// when PURERDMA_CTOOLS=1; there a missing tool fails the test. A guest of
// another architecture than amd64 has none, and the test skips saying so.
// On a host it is looked up in PATH and the test skips when it is absent.
func CTool(t testing.TB, name string) string {
	t.Helper()
	skipForeignC(t)
	path, err := exec.LookPath(name)
	switch {
	case err == nil && strings.HasPrefix(path, projectBin):
		// Comparing our tool with itself would prove nothing.
		t.Fatalf("C tool %s resolved to the project's own %s", name, path)
	case err == nil:
		return path
	case InVM() && os.Getenv("PURERDMA_CTOOLS") == "1":
		t.Fatalf("C tool %s is not in the VM image: %v", name, err)
	case InVM():
		t.Fatalf("C tool %s needed, but the VM image was built without C tools (hack/vm test -ctools)", name)
	default:
		t.Skipf("C tool %s not installed: %v", name, err)
	}
	return ""
}

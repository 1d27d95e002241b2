// Package testenv finds the RDMA devices that integration tests run on.
//
// Every test that needs a device goes through this package, so that the
// rule "a missing device is a skip on a bare host and a failure in the VM
// and in a native run" lives in one place. The VM's init marks the guest
// with PURERDMA_VM=1 and PURERDMA_VM_ARCH, and names the devices it
// created (see hack/vm): rxe0 and siw0 in amd64 guests, rxe0 alone in
// arm64 guests. On a host that has RDMA devices, `make test-native`
// (hack/native.sh) sets PURERDMA_NATIVE=1 and names the devices under test
// in PURERDMA_DEV; the rest is read from the kernel (native.go).
//
// A test asks for a device by what it checks: Run or Devices for what
// every device must do, RoCE for what the verbs define on the InfiniBand
// transport (rxe in the VM, a ConnectX on a RoCE port natively), Only for
// one driver's own behaviour, and SkipHardware inside Run where the
// expectations are the software drivers' as the VM measured them.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/vm/plan"
	"github.com/purerdma/purerdma/uverbs/uverbstest"
)

// Dev is one device a test may use.
type Dev struct {
	Name string // RDMA device name, e.g. "rxe0"
	// Driver is "rxe" or "siw" (the link type) for the software devices,
	// rdma-core's provider name for a hardware one ("mlx5"), "" when
	// unknown.
	Driver string
	Netdev string // the network device it sits on, e.g. "veth0"
	Addr   string // an IPv4 address of Netdev, "" when unknown
	// Link is how port 1 carries RDMA: LinkRoCE, LinkIB or LinkIWARP.
	// "" (a Dev a test makes itself) means Driver's: rxe is RoCE, siw
	// iWARP.
	Link string
}

// The values of Dev.Link.
const (
	LinkRoCE  = "roce"  // InfiniBand transport on Ethernet (rxe, mlx5 on an Ethernet port)
	LinkIB    = "ib"    // InfiniBand transport on an InfiniBand port (mlx5 on an IB port)
	LinkIWARP = "iwarp" // iWARP (siw)
)

// link is d.Link, or what Driver implies when the test left it empty.
func (d Dev) link() string {
	switch {
	case d.Link != "":
		return d.Link
	case d.Driver == "rxe":
		return LinkRoCE
	case d.Driver == "siw":
		return LinkIWARP
	}
	return ""
}

// RoCE reports whether d speaks the InfiniBand transport over Ethernet:
// peers are addressed by GID, which the address's RoCE v2 GID gives.
func (d Dev) RoCE() bool { return d.link() == LinkRoCE }

// IWARP reports whether d is an iWARP device: no UD, no QPs connected by
// exchanged numbers, only rdma_cm.
func (d Dev) IWARP() bool { return d.link() == LinkIWARP }

// Hardware reports whether d is neither of the software devices the VM
// tests on (rxe, siw): a real adapter, whose behaviour where the verbs
// leave it open was never measured by the VM suite.
func (d Dev) Hardware() bool { return d.Driver != "rxe" && d.Driver != "siw" }

// String names the device and its driver, e.g. "mlx5_0 (mlx5, roce)".
func (d Dev) String() string {
	if d.Driver == "" {
		return d.Name
	}
	if l := d.link(); l != "" && d.Hardware() {
		return fmt.Sprintf("%s (%s, %s)", d.Name, d.Driver, l)
	}
	return fmt.Sprintf("%s (%s)", d.Name, d.Driver)
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
		t.Skip("needs the purerdma test VM (make test): it changes the system, links, devices or modules, which a host's tests must not")
	}
}

// vmDrivers are the drivers of the devices the VM's init creates: rxe on
// every architecture, siw on amd64 only, because hack/vm builds siw.ko out
// of tree for amd64 alone, and not on a kernel it builds no siw.ko for
// (6.18: PURERDMA_VM_NO_SIW says why).
func vmDrivers() []string {
	if Arch() == "amd64" && os.Getenv(plan.NoSiwEnv) == "" {
		return []string{"rxe", "siw"}
	}
	return []string{"rxe"}
}

// Devices returns the devices to test on. In the VM that is rxe0 and, on
// amd64, siw0 as init created them, and a missing one fails the test. In
// a native run (make test-native) it is the devices PURERDMA_DEV names, or
// every device of the host, and a missing device, or one without an IPv4
// address, fails the test too. Elsewhere the test is skipped. Every test
// that asks for a device gets a leak check (CheckLeaks): call Devices,
// Device, RoCE, Only or Run before making objects.
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
		devs, err := nativeDevices()
		if err != nil {
			t.Fatalf("make test-native: %v", err)
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

// RoCE returns a device of the InfiniBand transport on Ethernet, for a
// test of what the verbs define there (QPs connected by exchanged
// numbers, UD, address handles, multicast): rxe0 in the VM, where a
// missing one fails the test; in a native run the first device under test
// whose port 1 is RoCE (a ConnectX on an Ethernet port, or rxe). A native
// run without one skips, naming the devices it has: the tests address
// their peer by the RoCE v2 GID of its IPv4 address, which neither an
// InfiniBand port nor iWARP has.
func RoCE(t testing.TB) Dev {
	t.Helper()
	if !Native() {
		return Device(t, "rxe")
	}
	devs := Devices(t)
	for _, d := range devs {
		if d.RoCE() {
			return d
		}
	}
	t.Skipf("no RoCE device under test (%s): the test addresses its peer by the RoCE v2 GID of an IPv4 address", devList(devs))
	return Dev{}
}

// Only returns the device of driver ("rxe" or "siw") for a test of that
// driver's own behaviour: its counters, its kernel's quirks, expectations
// measured on it in the VM. why says what ties the test to the driver. In
// the VM it is Device. In a native run without such a device the test
// skips with why, so that the run's log says what a hardware device did
// not cover.
func Only(t testing.TB, driver, why string) Dev {
	t.Helper()
	if !Native() {
		return Device(t, driver)
	}
	devs := Devices(t)
	for _, d := range devs {
		if d.Driver == driver {
			return d
		}
	}
	t.Skipf("%s only: %s (devices under test: %s)", driver, why, devList(devs))
	return Dev{}
}

// SkipHardware skips t on a hardware device, saying why: for a test, or
// the part of one, whose expectations are what rxe and siw do where the
// verbs leave the behaviour to the device (error paths, counters, limits),
// measured in the VM and not yet on hardware. rxe and siw run it as
// before.
func SkipHardware(t testing.TB, d Dev, why string) {
	t.Helper()
	if d.Hardware() {
		t.Skipf("rxe and siw only: %s; %s is not one of them", why, d)
	}
}

// devList names devices for a message: "mlx5_0 (mlx5, roce), siw0 (siw)".
func devList(devs []Dev) string {
	s := make([]string, len(devs))
	for i, d := range devs {
		s[i] = d.String()
	}
	return strings.Join(s, ", ")
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
	if why := os.Getenv(plan.NoSiwEnv); driver == "siw" && why != "" {
		return why
	}
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

// cToolsPromised reports whether the run promised the C tools and test
// peers: the VM image packed them (-ctools), or make test-native checked
// that the host has them. A missing one then fails the test.
func cToolsPromised() bool {
	return (InVM() || Native()) && os.Getenv("PURERDMA_CTOOLS") == "1"
}

// vmDevice reads the device that the VM's init created for driver and checks
// that the kernel really has it (uverbstest.Lookup, what users' tests in
// rdmavm's guests read).
func vmDevice(t testing.TB, driver string) Dev {
	t.Helper()
	u, err := uverbstest.Lookup(driver)
	if err != nil {
		t.Fatalf("in the VM: %v", err)
	}
	d := Dev{Name: u.Name, Driver: u.Driver, Netdev: u.Netdev, Addr: u.Addr}
	d.Link = d.link()
	return d
}

// vmProjectBin is where the VM puts purerdma's own commands, last in PATH.
const vmProjectBin = "/opt/purerdma/bin"

// projectBin is the directory of purerdma's own commands: the VM's, or
// the one PURERDMA_BIN names (make test-native builds them into
// .cache/native/bin).
func projectBin() string {
	if dir := os.Getenv("PURERDMA_BIN"); dir != "" {
		return filepath.Clean(dir)
	}
	return vmProjectBin
}

// CTool returns the path of a C reference program from rdma-core or
// perftest (ibv_devinfo, rping, ib_write_lat...). The VM image carries them
// when PURERDMA_CTOOLS=1, and make test-native sets it once it has checked
// that the host has them; there a missing tool fails the test. A guest of
// another architecture than amd64 has none, and the test skips saying so.
// Elsewhere it is looked up in PATH and the test skips when it is absent.
func CTool(t testing.TB, name string) string {
	t.Helper()
	skipForeignC(t)
	path, err := exec.LookPath(name)
	switch {
	case err == nil && filepath.Dir(path) == projectBin():
		// Comparing our tool with itself would prove nothing.
		t.Fatalf("C tool %s resolved to the project's own %s", name, path)
	case err == nil:
		return path
	case InVM() && cToolsPromised():
		t.Fatalf("C tool %s is not in the VM image: %v", name, err)
	case InVM():
		t.Fatalf("C tool %s needed, but the VM image was built without C tools (hack/vm test -ctools)", name)
	case cToolsPromised():
		t.Fatalf("C tool %s is not installed, though make test-native checked for it: %v", name, err)
	default:
		t.Skipf("C tool %s not installed: %v", name, err)
	}
	return ""
}

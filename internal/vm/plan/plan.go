// Package plan is the contract between the VM runner on the host and the
// guest's /init: what to run, and how the guest reports the outcome.
package plan

import "slices"

// Path is where the runner puts the plan in the initramfs.
const Path = "/etc/purerdma/plan.json"

// ModulesDir holds the kernel modules that init loads. It is outside /lib,
// which is a symlink into /usr in the guest as on the host (merged /usr).
const ModulesDir = "/modules"

// StatusPrefix starts the last line init prints: the prefix, then the
// combined exit status (0 if every step passed, 1 if one failed, 2 if the
// guest could not be set up).
const StatusPrefix = "purerdma-vm: exit status "

// StepPrefix starts the two lines init frames each step's output with:
// "run NAME (ARCH, Linux RELEASE)" before it and "NAME exit CODE (ARCH,
// Linux RELEASE, TIME)" after it.
const StepPrefix = "=== purerdma-vm: "

// Mode says what the guest is for.
type Mode string

const (
	ModeTest  Mode = "test"  // run the steps, report their combined status
	ModeDemo  Mode = "demo"  // the same, for people to watch
	ModeShell Mode = "shell" // start Shell on the console after setup
)

// Plan tells init what to run.
type Plan struct {
	Mode   Mode              `json:"mode"`
	Arch   string            `json:"arch"`
	Steps  []Step            `json:"steps"`
	Env    map[string]string `json:"env,omitempty"`
	CTools bool              `json:"ctools,omitempty"`
	Shell  string            `json:"shell,omitempty"`
	Wire   *Wire             `json:"wire,omitempty"`
	// Hog is how many busy loops init runs beside the steps. The races
	// issue 20 chases showed only on a loaded host; a hog makes that load
	// part of the run instead of luck.
	Hog int `json:"hog,omitempty"`
	// Extra says the host packed a directory of its own choosing
	// (hack/vm -extra) as ExtraDir: init puts it on PATH and names it in
	// PURERDMA_EXTRA, so that a test that needs such files (librpma's C
	// examples, built outside the repository) runs only when they are
	// there.
	Extra bool `json:"extra,omitempty"`
	// Drivers are the device types the guest creates ("rxe", "siw"): nil
	// is every one the architecture has (DevicesFor). rdmavm -devices
	// picks them.
	Drivers []string `json:"drivers,omitempty"`
}

// NoSiwEnv names, in a guest without siw0 although its architecture
// could have one, the reason (a kernel the harness builds no siw.ko for).
const NoSiwEnv = "PURERDMA_VM_NO_SIW"

// GuestDevices returns the devices the plan's guest of arch creates.
func (p *Plan) GuestDevices(arch string) []Device {
	var ds []Device
	for _, d := range DevicesFor(arch) {
		if p.Drivers == nil || slices.Contains(p.Drivers, d.Type) {
			ds = append(ds, d)
		}
	}
	return ds
}

// ExtraDir is where the files of hack/vm -extra land in the guest.
const ExtraDir = "/opt/extra"

// Step is one program to run.
type Step struct {
	Name string   `json:"name"`
	Path string   `json:"path"`
	Args []string `json:"args,omitempty"`
	Dir  string   `json:"dir,omitempty"`
}

// Devices the guest creates, and the addresses of their netdevs. Tests see
// them as PURERDMA_<DRIVER>, _NETDEV and _ADDR.
var Devices = []Device{
	{Name: "rxe0", Type: "rxe", Netdev: "veth0", Peer: "veth1", Prefix: "192.168.77.1/24"},
	{Name: "siw0", Type: "siw", Netdev: "veth2", Peer: "veth3", Prefix: "192.168.78.1/24"},
}

// DevicesFor returns the devices a guest of arch creates. The harness
// builds siw.ko out of tree for amd64 only (arm64 would need a cross
// build), so other guests have rxe0 alone.
func DevicesFor(arch string) []Device {
	var ds []Device
	for _, d := range Devices {
		if d.Type != "siw" || arch == "amd64" {
			ds = append(ds, d)
		}
	}
	return ds
}

// Device is an RDMA link on a veth pair.
type Device struct {
	Name, Type, Netdev, Peer, Prefix string
}

// Wire joins the guests of the pair command on one Ethernet segment. All
// guests boot the same initramfs; each finds its own entry by the MAC
// address of its NIC, and the other entry is its peer.
type Wire struct {
	Netdev string      `json:"netdev"` // the NIC, e.g. "eth0"
	Device string      `json:"device"` // the rxe link init adds on it
	Guests []WireGuest `json:"guests"`
}

// WireGuest is one guest on the wire.
type WireGuest struct {
	Name   string `json:"name"`   // "a" or "b"
	MAC    string `json:"mac"`    // as /sys/class/net/*/address shows it
	Prefix string `json:"prefix"` // its address on the wire, e.g. 192.168.90.1/24
	Role   string `json:"role"`   // "server" or "client"
}

// PowerOffPrefix starts a console line by which a guest of the pair
// command asks the host to power it off at once, as a pulled plug: the
// rest of the line is the guest's name. The test of a peer that vanishes
// mid-transfer uses it.
const PowerOffPrefix = "purerdma-pair: power off now: "

// MarkPrefix starts a console line by which a guest of the pair command
// marks a moment: the host notes the time on its own clock (the guests'
// clocks drift under emulation) and prints the marks and, for each pair
// of marks "NAME.start" and "NAME.end", the time between them. The rest
// of the line is the mark's name, a space and free text.
const MarkPrefix = "purerdma-pair: mark "

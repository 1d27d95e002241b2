package uverbs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/purerdma/purerdma/internal/provider/drivers"
)

const (
	sysfsRoot = "/sys"
	devDir    = "/dev/infiniband"
)

// sysfsDevices lists devices the way libibverbs does without netlink: each
// /sys/class/infiniband_verbs/uverbsN names its ibdev and ABI version, and
// /sys/class/infiniband/<ibdev> holds the rest. The driver comes from the
// parent device's kernel driver or, for a software device, the name, so
// prefer netlink, which says it. root is "/sys" except in tests.
func sysfsDevices(root string) ([]Device, error) {
	verbsDir := filepath.Join(root, "class", "infiniband_verbs")
	entries, err := os.ReadDir(verbsDir)
	if err != nil {
		return nil, fmt.Errorf("uverbs: list devices: %w", err)
	}
	var devs []Device
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "uverbs") {
			continue // the class also holds the global abi_version file
		}
		d, err := sysfsDevice(root, filepath.Join(verbsDir, e.Name()))
		if err != nil {
			return nil, err
		}
		devs = append(devs, d)
	}
	return devs, nil
}

func sysfsDevice(root, verbsDir string) (Device, error) {
	d := Device{Char: filepath.Base(verbsDir)}
	r := sysfsReader{dir: verbsDir}
	d.Name = r.string("ibdev")
	d.ABIVersion = uint32(r.uint("abi_version"))

	r.dir = filepath.Join(root, "class", "infiniband", d.Name)
	d.NodeGUID = r.guid("node_guid")
	d.NodeType = NodeType(r.uint("node_type")) // "1: CA": the number comes first
	d.FWVersion = r.optional("fw_ver")
	if r.err != nil {
		return Device{}, fmt.Errorf("uverbs: %s: %w", d.Char, r.err)
	}
	d.Driver = driverFromSysfs(r.dir, d.Name)
	return d, nil
}

// driverFromSysfs names the driver of the device whose sysfs directory
// is dir: a hardware device's parent is bound to its kernel driver
// (device/driver, e.g. mlx5_core), which udev's renaming (rocep1s0f0)
// does not change; a software device has no parent, and its default name
// says the driver.
func driverFromSysfs(dir, name string) Driver {
	if target, err := os.Readlink(filepath.Join(dir, "device", "driver")); err == nil {
		if id, ok := drivers.FromKernelDriver(filepath.Base(target)); ok {
			return Driver(id)
		}
	}
	return driverFromName(name)
}

// sysfsReader reads small attribute files, keeping the first error so that
// a device is parsed in one pass and checked once.
type sysfsReader struct {
	dir string
	err error
}

func (r *sysfsReader) string(name string) string {
	if r.err != nil {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(r.dir, name))
	if err != nil {
		r.err = err
		return ""
	}
	return strings.TrimSpace(string(b))
}

// optional reads an attribute that not every driver provides.
func (r *sysfsReader) optional(name string) string {
	b, err := os.ReadFile(filepath.Join(r.dir, name))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// uint parses the leading decimal number of an attribute.
func (r *sysfsReader) uint(name string) uint64 {
	s := r.string(name)
	if r.err != nil {
		return 0
	}
	if i := strings.IndexFunc(s, func(c rune) bool { return c < '0' || c > '9' }); i >= 0 {
		s = s[:i]
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		r.err = fmt.Errorf("%s: %w", name, err)
	}
	return v
}

func (r *sysfsReader) guid(name string) GUID {
	s := r.string(name)
	if r.err != nil {
		return 0
	}
	g, err := ParseGUID(s)
	if err != nil {
		r.err = fmt.Errorf("%s: %w", name, err)
	}
	return g
}

// ParseGUID parses the "xxxx:xxxx:xxxx:xxxx" form that sysfs and
// ibv_devices print.
func ParseGUID(s string) (GUID, error) {
	groups := strings.Split(s, ":")
	if len(groups) != 4 {
		return 0, fmt.Errorf("uverbs: GUID %q: want four groups of hex digits: %w", s, ErrInvalid)
	}
	var g GUID
	for _, grp := range groups {
		if len(grp) == 0 || len(grp) > 4 {
			return 0, fmt.Errorf("uverbs: GUID %q: bad group %q: %w", s, grp, ErrInvalid)
		}
		v, err := strconv.ParseUint(grp, 16, 16)
		if err != nil {
			return 0, fmt.Errorf("uverbs: GUID %q: %w: %w", s, ErrInvalid, err)
		}
		g = g<<16 | GUID(v)
	}
	return g, nil
}

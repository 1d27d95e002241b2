package uverbs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseGUID(t *testing.T) {
	tests := []struct {
		in      string
		want    GUID
		wantErr bool
	}{
		{in: "5054:00ff:fe12:3456", want: 0x505400fffe123456},
		{in: "0000:0000:0000:0001", want: 1},
		{in: "ffff:ffff:ffff:ffff", want: 0xffffffffffffffff},
		{in: "5054:00ff:fe12", wantErr: true},
		{in: "5054:00ff:fe12:3456:0000", wantErr: true},
		{in: "5054:00ff:fe12:", wantErr: true},
		{in: "5054:00ff:fe12:34567", wantErr: true},
		{in: "5054:00ff:fe12:zzzz", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseGUID(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseGUID(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if err == nil && got != tt.want {
			t.Errorf("ParseGUID(%q) = %#x, want %#x", tt.in, uint64(got), uint64(tt.want))
		}
		if err == nil && got.String() != tt.in {
			t.Errorf("GUID(%#x).String() = %q, want %q", uint64(got), got.String(), tt.in)
		}
	}
}

// writeTree creates files under root from a path → content map.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSysfsDevices(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"class/infiniband_verbs/abi_version":         "6",
		"class/infiniband_verbs/uverbs0/ibdev":       "rxe0",
		"class/infiniband_verbs/uverbs0/abi_version": "2",
		"class/infiniband/rxe0/node_guid":            "5054:00ff:fe12:3456",
		"class/infiniband/rxe0/node_type":            "1: CA",
		"class/infiniband/rxe0/fw_ver":               "6.1.0",
		"class/infiniband_verbs/uverbs1/ibdev":       "siw0",
		"class/infiniband_verbs/uverbs1/abi_version": "1",
		"class/infiniband/siw0/node_guid":            "5254:00ff:fe00:0001",
		"class/infiniband/siw0/node_type":            "4: RNIC",
	})
	got, err := sysfsDevices(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Device{
		{Name: "rxe0", NodeGUID: 0x505400fffe123456, NodeType: NodeCA, FWVersion: "6.1.0", Driver: DriverRXE, Char: "uverbs0", ABIVersion: 2},
		{Name: "siw0", NodeGUID: 0x525400fffe000001, NodeType: NodeRNIC, Driver: DriverSIW, Char: "uverbs1", ABIVersion: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sysfsDevices() mismatch (-want +got):\n%s", diff)
	}
	if p := got[1].Path(); p != "/dev/infiniband/uverbs1" {
		t.Errorf("Path() = %q", p)
	}
}

// TestSysfsDriver checks the driver sysfs names: the parent's kernel
// driver for hardware, whatever udev renamed the device to, else the
// name's prefix.
func TestSysfsDriver(t *testing.T) {
	for _, tc := range []struct {
		name, parentDriver string // "" for no parent device
		want               Driver
	}{
		{"mlx5_0", "mlx5_core", DriverMLX5},
		{"rocep1s0f0", "mlx5_core", DriverMLX5},
		{"ibp59s0", "mlx4_core", DriverMLX4},
		{"efa_0", "efa", DriverEFA},
		{"mlx5_1", "", DriverMLX5}, // no parent link: the name
		{"rxe0", "", DriverRXE},
		{"siw_eth0", "", DriverSIW},
		{"rocep2s0", "", DriverUnknown},
		{"rocep3s0", "some_nic", DriverUnknown},
	} {
		dir := filepath.Join(t.TempDir(), tc.name)
		if err := os.MkdirAll(filepath.Join(dir, "device"), 0o755); err != nil {
			t.Fatal(err)
		}
		if tc.parentDriver != "" {
			target := filepath.Join("..", "..", "..", "bus", "pci", "drivers", tc.parentDriver)
			if err := os.Symlink(target, filepath.Join(dir, "device", "driver")); err != nil {
				t.Fatal(err)
			}
		}
		if got := driverFromSysfs(dir, tc.name); got != tc.want {
			t.Errorf("%s on %q: driver %v, want %v", tc.name, tc.parentDriver, got, tc.want)
		}
	}
}

func TestSysfsDevicesErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
	}{
		{name: "no class dir", files: map[string]string{}},
		{name: "missing ibdev", files: map[string]string{
			"class/infiniband_verbs/uverbs0/abi_version": "2",
		}},
		{name: "bad abi", files: map[string]string{
			"class/infiniband_verbs/uverbs0/ibdev":       "rxe0",
			"class/infiniband_verbs/uverbs0/abi_version": "two",
		}},
		{name: "missing device dir", files: map[string]string{
			"class/infiniband_verbs/uverbs0/ibdev":       "rxe0",
			"class/infiniband_verbs/uverbs0/abi_version": "2",
		}},
		{name: "bad guid", files: map[string]string{
			"class/infiniband_verbs/uverbs0/ibdev":       "rxe0",
			"class/infiniband_verbs/uverbs0/abi_version": "2",
			"class/infiniband/rxe0/node_guid":            "nope",
			"class/infiniband/rxe0/node_type":            "1: CA",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tt.files)
			if devs, err := sysfsDevices(root); err == nil {
				t.Errorf("sysfsDevices() = %+v, want an error", devs)
			}
		})
	}
}

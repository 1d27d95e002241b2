package testenv

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNativeNames: PURERDMA_DEV picks and orders the devices under test,
// comma- or space-separated; empty, it is every device, sorted; a name
// the host lacks, or a host without devices, is an error that says so.
func TestNativeNames(t *testing.T) {
	dir := t.TempDir()
	old := sysClassIB
	t.Cleanup(func() { sysClassIB = old })
	sysClassIB = filepath.Join(dir, "infiniband")
	if _, err := nativeNames(""); err == nil || !strings.Contains(err.Error(), "no RDMA device in ") {
		t.Errorf("no class directory: %v, want no RDMA device", err)
	}
	for _, n := range []string{"siw0", "mlx5_1", "rxe0", "mlx5_0"} {
		if err := os.MkdirAll(filepath.Join(sysClassIB, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		list    string
		want    []string
		wantErr string
	}{
		{"", []string{"mlx5_0", "mlx5_1", "rxe0", "siw0"}, ""},
		{"mlx5_1", []string{"mlx5_1"}, ""},
		{"siw0,rxe0", []string{"siw0", "rxe0"}, ""},
		{" rxe0  siw0 ", []string{"rxe0", "siw0"}, ""},
		{"rxe0,mlx5_9", nil, "PURERDMA_DEV names mlx5_9, which " + sysClassIB + " does not list (it has mlx5_0, mlx5_1, rxe0, siw0)"},
	} {
		got, err := nativeNames(tc.list)
		switch {
		case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
			t.Errorf("nativeNames(%q) error %v, want %q", tc.list, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("nativeNames(%q) = %q, %v; want %q", tc.list, got, err, tc.want)
		}
	}
}

// TestDevKinds: what a Dev says of itself, with Link set (a native
// device) and left empty (a Dev a test makes, Driver's link).
func TestDevKinds(t *testing.T) {
	for _, tc := range []struct {
		d                     Dev
		roce, iwarp, hardware bool
		str                   string
	}{
		{Dev{Name: "rxe0", Driver: "rxe"}, true, false, false, "rxe0 (rxe)"},
		{Dev{Name: "siw0", Driver: "siw"}, false, true, false, "siw0 (siw)"},
		{Dev{Name: "mlx5_0", Driver: "mlx5", Link: LinkRoCE}, true, false, true, "mlx5_0 (mlx5, roce)"},
		{Dev{Name: "mlx5_1", Driver: "mlx5", Link: LinkIB}, false, false, true, "mlx5_1 (mlx5, ib)"},
		{Dev{Name: "rocep1s0f0", Driver: "mlx5", Link: LinkRoCE}, true, false, true, "rocep1s0f0 (mlx5, roce)"},
		{Dev{Name: "iwp1s0", Driver: "irdma", Link: LinkIWARP}, false, true, true, "iwp1s0 (irdma, iwarp)"},
		{Dev{Name: "x0"}, false, false, true, "x0"},
	} {
		d := tc.d
		if d.RoCE() != tc.roce || d.IWARP() != tc.iwarp || d.Hardware() != tc.hardware || d.String() != tc.str {
			t.Errorf("%+v: RoCE %v, IWARP %v, Hardware %v, String %q; want %v, %v, %v, %q",
				d, d.RoCE(), d.IWARP(), d.Hardware(), d.String(), tc.roce, tc.iwarp, tc.hardware, tc.str)
		}
	}
}

// TestSkipHardware skips on a hardware device only, naming it and why.
func TestSkipHardware(t *testing.T) {
	for _, tc := range []struct {
		d    Dev
		skip bool
	}{
		{Dev{Name: "rxe0", Driver: "rxe"}, false},
		{Dev{Name: "siw0", Driver: "siw"}, false},
		{Dev{Name: "mlx5_0", Driver: "mlx5", Link: LinkRoCE}, true},
	} {
		var skipped bool
		t.Run(tc.d.Name, func(t *testing.T) {
			defer func() { skipped = t.Skipped() }()
			SkipHardware(t, tc.d, "the reason")
		})
		if skipped != tc.skip {
			t.Errorf("%s: skipped %v, want %v", tc.d, skipped, tc.skip)
		}
	}
}

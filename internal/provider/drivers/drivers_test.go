package drivers_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider/drivers"
	"github.com/purerdma/purerdma/internal/testenv"
)

func TestProvider(t *testing.T) {
	for _, tc := range []struct {
		id   uint32
		name string // "" for an id the table does not know
		has  bool   // a Go provider
	}{
		{abi.RDMA_DRIVER_RXE, "rxe", true},
		{abi.RDMA_DRIVER_SIW, "siw", true},
		{abi.RDMA_DRIVER_MLX5, "mlx5", true},
		{abi.RDMA_DRIVER_MLX4, "mlx4", false},
		{abi.RDMA_DRIVER_BNXT_RE, "bnxt_re", false},
		{abi.RDMA_DRIVER_EFA, "efa", false},
		{abi.RDMA_DRIVER_UNKNOWN, "", false},
		{99, "", false},
	} {
		if got := drivers.Name(tc.id); got != tc.name {
			t.Errorf("Name(%d) = %q, want %q", tc.id, got, tc.name)
		}
		p, ok := drivers.Provider(tc.id)
		if ok != tc.has {
			t.Errorf("Provider(%d) ok = %v, want %v", tc.id, ok, tc.has)
			continue
		}
		if ok && p.Name() != tc.name {
			t.Errorf("Provider(%d).Name() = %q, want %q", tc.id, p.Name(), tc.name)
		}
		if tc.name == "" {
			continue
		}
		if id, ok := drivers.ByName(tc.name); !ok || id != tc.id {
			t.Errorf("ByName(%q) = %d, %v; want %d", tc.name, id, ok, tc.id)
		}
	}
	if id, ok := drivers.ByName("nosuch"); ok {
		t.Errorf("ByName(nosuch) = %d, true", id)
	}
}

func TestLabel(t *testing.T) {
	for id, want := range map[uint32]string{abi.RDMA_DRIVER_MLX5: "mlx5", 99: "id 99"} {
		if got := drivers.Label(id); got != want {
			t.Errorf("Label(%d) = %q, want %q", id, got, want)
		}
	}
}

func TestFromDeviceName(t *testing.T) {
	for dev, want := range map[string]uint32{
		"rxe0":     abi.RDMA_DRIVER_RXE,
		"siw_eth1": abi.RDMA_DRIVER_SIW,
		"mlx5_0":   abi.RDMA_DRIVER_MLX5,
		"mlx4_1":   abi.RDMA_DRIVER_MLX4,
		"bnxt_re0": abi.RDMA_DRIVER_BNXT_RE,
		"hfi1_0":   abi.RDMA_DRIVER_HFI1,
		"eth0":     abi.RDMA_DRIVER_UNKNOWN,
		"":         abi.RDMA_DRIVER_UNKNOWN,
	} {
		if got := drivers.FromDeviceName(dev); got != want {
			t.Errorf("FromDeviceName(%q) = %d, want %d", dev, got, want)
		}
	}
}

// TestEveryProviderListed fails when a package under internal/provider
// implements a driver (it has a Driver constructor) that the table does
// not list: such a provider would be in no binary.
func TestEveryProviderListed(t *testing.T) {
	if testenv.InVM() {
		t.Skip("the VM has the test binary, not the source tree")
	}
	dirs, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		src, err := os.ReadFile(filepath.Join("..", d.Name(), "driver.go"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "\nfunc Driver() provider.Driver") {
			found = append(found, d.Name())
		}
	}
	if len(found) == 0 {
		t.Fatal("no package under internal/provider has a driver.go with func Driver: the walk is broken")
	}
	if listed := drivers.WithProvider(); !slices.Equal(found, listed) {
		t.Errorf("packages with a driver: %v; listed with a provider: %v", found, listed)
	}
}

// TestLinkedIntoBuilds checks what users build, not test binaries (which
// may import a provider themselves): every public package depends on
// every provider in an ordinary build, and a built command's symbols
// hold each provider's code.
func TestLinkedIntoBuilds(t *testing.T) {
	if testenv.InVM() {
		t.Skip("the VM has the test binary, not the source tree or go")
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go command: %v", err)
	}
	providers := drivers.WithProvider()
	const mod = "github.com/purerdma/purerdma/"
	pkgs := []string{"uverbs", "cq", "mr", "rdmacm", "rsocket", "rpma"}
	for _, pkg := range pkgs {
		cmd := exec.Command(gocmd, "list", "-deps", mod+pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		for _, p := range providers {
			if !slices.Contains(deps, mod+"internal/provider/"+p) {
				t.Errorf("%s does not depend on internal/provider/%s in an ordinary build", pkg, p)
			}
		}
	}

	bin := filepath.Join(t.TempDir(), "devinfo")
	build := exec.Command(gocmd, "build", "-o", bin, mod+"cmd/devinfo")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/devinfo: %v\n%s", err, out)
	}
	out, err := exec.Command(gocmd, "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	for _, p := range providers {
		// A type's methods, e.g. internal/provider/mlx5.driver.NewContext:
		// code the linker kept because the table reaches it.
		if !strings.Contains(string(out), mod+"internal/provider/"+p+".") {
			t.Errorf("cmd/devinfo has no symbol of internal/provider/%s", p)
		}
	}
}

func TestFromKernelDriver(t *testing.T) {
	for _, tc := range []struct {
		module string
		id     uint32
		ok     bool
	}{
		{"mlx5_core", abi.RDMA_DRIVER_MLX5, true},
		{"mlx4_core", abi.RDMA_DRIVER_MLX4, true},
		{"efa", abi.RDMA_DRIVER_EFA, true},
		{"irdma", abi.RDMA_DRIVER_IRDMA, true},
		{"e1000e", abi.RDMA_DRIVER_UNKNOWN, false},
	} {
		if id, ok := drivers.FromKernelDriver(tc.module); id != tc.id || ok != tc.ok {
			t.Errorf("FromKernelDriver(%q) = %d, %v; want %d, %v", tc.module, id, ok, tc.id, tc.ok)
		}
	}
}

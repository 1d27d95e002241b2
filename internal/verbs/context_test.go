package verbs

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
)

// TestContextDriver checks which devices get a provider when their
// context opens, and that a device without one fails its first create
// with ErrNoProvider naming its kernel driver.
func TestContextDriver(t *testing.T) {
	for _, tc := range []struct {
		name     string
		driverID uint32
		provider string // the provider's name; "" for none
		label    string // what the error names when there is none
	}{
		{"rxe0", abi.RDMA_DRIVER_RXE, "rxe", ""},
		{"siw0", abi.RDMA_DRIVER_SIW, "siw", ""},
		{"mlx5_0", abi.RDMA_DRIVER_MLX5, "mlx5", ""},
		{"bnxt_re0", abi.RDMA_DRIVER_BNXT_RE, "", "kernel driver bnxt_re"},
		{"odd0", 99, "", "kernel driver id 99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			c, err := NewContext(tc.name, w, tc.driverID)
			if err != nil {
				t.Fatalf("NewContext: %v", err)
			}
			err = c.NeedDriver("create CQ")
			if tc.provider != "" {
				if c.Driver == nil || c.Driver.Name() != tc.provider || c.Provider == nil || err != nil {
					t.Fatalf("driver %v, context %v, NeedDriver %v; want provider %s", c.Driver, c.Provider, err, tc.provider)
				}
				c.Provider.Close()
				return
			}
			if c.Driver != nil || c.Provider != nil {
				t.Fatalf("driver %v, context %v; want none", c.Driver, c.Provider)
			}
			if !errors.Is(err, ErrNoProvider) || !errors.Is(err, ErrUnsupported) {
				t.Fatalf("NeedDriver = %v; want ErrNoProvider (an ErrUnsupported)", err)
			}
			for _, want := range []string{"create CQ on " + tc.name, tc.label, "purerdma has mlx5, rxe, siw"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("NeedDriver = %q; want it to say %q", err, want)
				}
			}
		})
	}
}

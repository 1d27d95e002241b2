package smoke

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestCToolsSeeDevices checks that the C reference stack packed into the VM
// (libibverbs, its providers and ibv_devinfo) works on each device, since
// later interop tests rely on it.
func TestCToolsSeeDevices(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		out, err := exec.Command(testenv.CTool(t, "ibv_devinfo"), "-d", d.Name).CombinedOutput()
		if err != nil {
			t.Fatalf("ibv_devinfo -d %s: %v\n%s", d.Name, err, out)
		}
		for _, want := range []string{"hca_id:\t" + d.Name, "PORT_ACTIVE"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("ibv_devinfo -d %s does not say %q:\n%s", d.Name, want, out)
			}
		}
	})
}

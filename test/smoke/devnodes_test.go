// Package smoke holds the first checks of the test VM: the device nodes
// that every other package relies on exist and open.
package smoke

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/testenv"
)

func TestDeviceNodesOpen(t *testing.T) {
	devs := testenv.Devices(t)
	uverbs, err := filepath.Glob("/dev/infiniband/uverbs*")
	if err != nil {
		t.Fatal(err)
	}
	if len(uverbs) < len(devs) {
		t.Errorf("%d uverbs nodes %v for %d devices", len(uverbs), uverbs, len(devs))
	}
	for _, p := range append(uverbs, "/dev/infiniband/rdma_cm") {
		t.Run(filepath.Base(p), func(t *testing.T) {
			f, err := os.OpenFile(p, os.O_RDWR|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			if err := f.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
}

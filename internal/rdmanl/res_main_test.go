package rdmanl_test

import (
	"os"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestMain fails the run if the package's tests, in the VM, leave RDMA
// objects or file descriptors behind.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

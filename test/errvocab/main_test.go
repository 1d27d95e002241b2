package errvocab_test

import (
	"os"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestMain fails the binary if the tests leave RDMA objects or fds behind.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

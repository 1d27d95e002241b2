package rsocket_test

import (
	"os"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestMain fails the binary if a test leaves IDs, QPs, CQs, fds or
// mappings behind.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

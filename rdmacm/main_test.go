package rdmacm_test

import (
	"os"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestMain fails the binary if a test leaves IDs, QPs, CQs or fds behind.
// With peerEnv set, the binary is instead the killable client of
// TestPeerGone.
func TestMain(m *testing.M) {
	if addr := os.Getenv(peerEnv); addr != "" {
		os.Exit(runPeer(addr))
	}
	os.Exit(testenv.Main(m))
}

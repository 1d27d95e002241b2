package rdmacm_test

import (
	"os"
	"testing"

	"github.com/purerdma/purerdma/internal/cmtest"
	"github.com/purerdma/purerdma/internal/testenv"
)

// TestMain fails the binary if a test leaves IDs, QPs, CQs or fds behind.
// Started by cmtest.StartPeer, the binary is instead the killable client of
// TestPeerGone.
func TestMain(m *testing.M) {
	cmtest.PeerMain()
	os.Exit(testenv.Main(m))
}

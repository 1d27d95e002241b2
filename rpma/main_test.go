package rpma_test

import (
	"os"
	"testing"

	"github.com/purerdma/purerdma/internal/cmtest"
	"github.com/purerdma/purerdma/internal/testenv"
)

// TestMain fails the binary if a test leaves RDMA objects or fds behind.
// Started by cmtest.StartPeer, the binary is instead the killable client of
// TestWaitPeerGone.
func TestMain(m *testing.M) {
	cmtest.PeerMain()
	os.Exit(testenv.Main(m))
}

package faults_test

import (
	"os"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestMain runs the killable peer when the binary is started as one,
// and otherwise the tests, failing the binary if they leave RDMA objects
// or fds behind.
func TestMain(m *testing.M) {
	if addr := os.Getenv(peerEnv); addr != "" {
		os.Exit(runPeer(addr))
	}
	os.Exit(testenv.Main(m))
}

package soak_test

import (
	"os"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestMain runs the killable client when the binary is started as one
// (childEnv set), and otherwise the soak, failing the binary if it left
// RDMA objects or fds behind.
func TestMain(m *testing.M) {
	if addr := os.Getenv(childEnv); addr != "" {
		os.Exit(runChild(addr))
	}
	os.Exit(testenv.Main(m))
}

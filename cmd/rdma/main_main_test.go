package main

import (
	"os"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestMain fails the binary if a test leaves RDMA objects or fds behind:
// the resource test opens a device context and a PD.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

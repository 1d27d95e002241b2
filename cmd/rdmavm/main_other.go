//go:build !linux

package main

import (
	"fmt"
	"os"
)

// On other systems rdmavm only says what it needs: it boots Linux guests
// with QEMU from Debian's kernels, and is itself their init.
func main() {
	fmt.Fprintln(os.Stderr, "rdmavm: runs on Linux hosts only (amd64 or arm64, with QEMU): it boots Linux guests and is their init")
	os.Exit(2)
}

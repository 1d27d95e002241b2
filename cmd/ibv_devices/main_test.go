package main

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestMatchesC compares our output with rdma-core's ibv_devices, byte for
// byte, on the same devices.
func TestMatchesC(t *testing.T) {
	testenv.Devices(t)
	want, err := exec.Command(testenv.CTool(t, "ibv_devices")).Output()
	if err != nil {
		t.Fatalf("C ibv_devices: %v", err)
	}
	var got bytes.Buffer
	if err := run(&got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Errorf("ibv_devices output differs from C (-C +Go):\n%s", diff)
	}
	for _, d := range testenv.Devices(t) {
		if !bytes.Contains(got.Bytes(), []byte(d.Name)) {
			t.Errorf("output does not list %s:\n%s", d.Name, got.String())
		}
	}
}

package cpio

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestArchiveListsWithCpio(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.File("init", 0o755, []byte("#!init"))
	w.File("lib/modules/rdma_rxe.ko", 0o644, []byte("elf"))
	w.Symlink("lib64/ld.so", "/lib/x86_64-linux-gnu/ld.so")
	w.Dir("tmp")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len()%4 != 0 {
		t.Errorf("archive length %d is not a multiple of 4", buf.Len())
	}
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Skip("cpio(1) not installed; install it to check the archive against GNU cpio")
	}
	cmd := exec.Command("cpio", "-t", "--quiet")
	cmd.Stdin = &buf
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cpio -t: %v", err)
	}
	got := strings.Fields(string(out))
	want := []string{"init", "lib", "lib/modules", "lib/modules/rdma_rxe.ko", "lib64", "lib64/ld.so", "tmp"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cpio -t mismatch (-want +got):\n%s", diff)
	}
}

func TestHeader(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.File("a", 0o644, []byte("xyz"))
	b := buf.Bytes()
	if got := string(b[:6]); got != "070701" {
		t.Fatalf("magic %q", got)
	}
	// mode field: regular file 0100644.
	if got := string(b[14:22]); got != "000081a4" {
		t.Errorf("mode field %q, want 000081a4", got)
	}
	// filesize 3, namesize 2 ("a\0").
	if got := string(b[54:62]); got != "00000003" {
		t.Errorf("filesize field %q", got)
	}
	if got := string(b[94:102]); got != "00000002" {
		t.Errorf("namesize field %q", got)
	}
	// 110-byte header + "a\0" padded to 112, then data.
	if got := string(b[112:115]); got != "xyz" {
		t.Errorf("data %q", got)
	}
}

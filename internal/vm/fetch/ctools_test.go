package fetch

import (
	"os/exec"
	"slices"
	"testing"
)

func TestLddPathParse(t *testing.T) {
	out := "\tlinux-vdso.so.1 (0x00007ffd)\n" +
		"\tlibibverbs.so.1 => /lib/x86_64-linux-gnu/libibverbs.so.1 (0x00007f01)\n" +
		"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f02)\n" +
		"\t/lib64/ld-linux-x86-64.so.2 (0x00007f03)\n"
	var got []string
	for _, m := range lddPath.FindAllStringSubmatch(out, -1) {
		got = append(got, m[1])
	}
	want := []string{"/lib/x86_64-linux-gnu/libibverbs.so.1", "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestWithLibrariesOnHostBinary(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	files, err := WithLibraries([]string{sh})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Errorf("WithLibraries(%s) = %q: want the program and at least libc", sh, files)
	}
}

//go:build linux

package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestGoTestExec is what a user does: a module of their own, outside the
// repository, that imports purerdma (a replace directive to this
// checkout), tested with go test -exec rdmavm, rdmavm built by go build
// as go install would. It boots QEMU guests, so make vm-test-exec runs
// it (in make test, after the kernels are cached); go test ./... skips it.
func TestGoTestExec(t *testing.T) {
	if os.Getenv("PURERDMA_EXEC_TEST") != "1" {
		t.Skip("boots QEMU guests: make vm-test-exec runs it")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "rdmavm")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	mod := userModule(t, root)
	cache := os.Getenv("PURERDMA_CACHE")
	if cache == "" {
		cache = filepath.Join(root, ".cache", "vm")
	}
	// go test runs the packages' binaries side by side, each in a guest
	// of its own: three guests in one go test, the pair in another.
	for _, tc := range []struct {
		name     string
		flags    string // rdmavm's, in -exec
		pkgs     []string
		wantFail bool
		want     []string // lines of go test -v's output
	}{
		{"one guest each", " -ctools", []string{"./write", "./fails", "./ctools"}, true, []string{
			"--- PASS: TestWrite/rxe0", "--- PASS: TestWrite/siw0", "ok  \texample.com/rdmavmuser/write",
			"fails_test.go:19: deliberate failure after opening rxe0", "--- FAIL: TestFails", "FAIL\texample.com/rdmavmuser/fails",
			"--- PASS: TestRpingServerC/rxe", "--- PASS: TestRpingServerC/siw", "--- PASS: TestRCPingpongC", "ok  \texample.com/rdmavmuser/ctools",
		}},
		{"pair", " -pair", []string{"./pair"}, false, []string{
			"[a] --- PASS: TestAcrossTheWire", "[b] --- PASS: TestAcrossTheWire", "ok  \texample.com/rdmavmuser/pair",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("go", append([]string{"test", "-count=1", "-v", "-exec", bin + tc.flags}, tc.pkgs...)...)
			cmd.Dir = mod
			cmd.Env = append(os.Environ(), "PURERDMA_CACHE="+cache)
			start := time.Now()
			out, err := cmd.CombinedOutput()
			t.Logf("go test -exec 'rdmavm%s' %s: %v in %v", tc.flags, strings.Join(tc.pkgs, " "), err, time.Since(start).Round(time.Millisecond))
			if failed := err != nil; failed != tc.wantFail {
				t.Fatalf("go test failed: %v, want %v\n%s", failed, tc.wantFail, out)
			}
			for _, w := range tc.want {
				if !bytes.Contains(out, []byte(w)) {
					t.Errorf("no %q in the output:\n%s", w, out)
				}
			}
			if bytes.Contains(out, []byte("--- SKIP")) {
				t.Errorf("a test skipped in the guest:\n%s", out)
			}
		})
	}
}

// userModule copies testdata/usermod to a directory outside the
// repository and makes it a module that requires purerdma from root.
func userModule(t *testing.T, root string) string {
	t.Helper()
	mod := t.TempDir()
	src := filepath.Join("testdata", "usermod")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(mod, strings.TrimPrefix(p, src))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	// purerdma's own go line and requirements, so that the go.sum copied
	// from the checkout covers the module graph and nothing is fetched.
	body := regexp.MustCompile(`(?s)\ngo .*`).FindString(string(gomod))
	body = strings.Replace(body, "require (", "require (\n\tgithub.com/purerdma/purerdma v0.0.0", 1)
	user := "module example.com/rdmavmuser\n" + body + "\nreplace github.com/purerdma/purerdma => " + root + "\n"
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(user), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	return mod
}

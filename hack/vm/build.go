package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

const (
	module     = "github.com/purerdma/purerdma"
	testenvPkg = module + "/internal/testenv"
)

// testPackage is a package whose test binary runs in the guest.
type testPackage struct {
	ImportPath string
	Dir        string
	Name       string // the binary's name: the path inside the module, "/" as "_"
}

// explicitOnly are the packages that run only when named: test/soak runs
// for as long as its -soak.duration says, in a guest of its own (make
// soak, make vm-test-soak), not in every suite run; test/kernelbugs
// reproduces kernel defects, which may leave the guest's kernel broken
// (make kernel-bugs).
var explicitOnly = map[string]bool{module + "/test/soak": true, module + "/test/kernelbugs": true}

// integrationPackages lists the packages matching patterns whose tests use
// internal/testenv, the mark of a test that needs a device. Without
// patterns it is every such package but the explicitOnly ones.
func integrationPackages(patterns []string) ([]testPackage, error) {
	all := len(patterns) == 0
	if all {
		patterns = []string{"./..."}
	}
	args := append([]string{"list", "-f", "{{.ImportPath}}|{{.Dir}}|{{join .TestImports \",\"}},{{join .XTestImports \",\"}}"}, patterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []testPackage
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "|", 3)
		if len(f) != 3 || !contains(strings.Split(f[2], ","), testenvPkg) || all && explicitOnly[f[0]] {
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(f[0], module), "/")
		pkgs = append(pkgs, testPackage{ImportPath: f[0], Dir: f[1], Name: strings.ReplaceAll(name, "/", "_")})
	}
	return pkgs, sc.Err()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// builder runs go build and go test -c for the guest's architecture.
type builder struct {
	arch string
	out  string
	// race builds the test binaries with the race detector, which needs
	// cgo: they then load the host's libc, which the image carries.
	race bool
	// built are the steps done, for a builder shared by the guests of
	// several kernels.
	built map[string]bool
}

// once runs step unless it has run, and remembers it when it succeeds.
func (b *builder) once(step string, f func() error) error {
	if b.built[step] {
		return nil
	}
	if err := f(); err != nil {
		return err
	}
	if b.built == nil {
		b.built = map[string]bool{}
	}
	b.built[step] = true
	return nil
}

func (b *builder) goCmd(args ...string) error { return b.goCmdCgo(false, args...) }

func (b *builder) goCmdCgo(cgo bool, args ...string) error {
	cmd := exec.Command("go", args...)
	enabled := "CGO_ENABLED=0"
	if cgo {
		enabled = "CGO_ENABLED=1"
	}
	cmd.Env = append(os.Environ(), enabled, "GOOS=linux", "GOARCH="+b.arch)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// tests compiles the test binaries, two at a time.
func (b *builder) tests(pkgs []testPackage) error {
	return b.once("tests", func() error { return b.buildTests(pkgs) })
}

func (b *builder) buildTests(pkgs []testPackage) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, 2)
	)
	for _, p := range pkgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			args := []string{"test", "-c", "-o", b.testBinary(p)}
			if b.race {
				args = append(args, "-race")
			}
			if err := b.goCmdCgo(b.race, append(args, p.ImportPath)...); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

func (b *builder) testBinary(p testPackage) string {
	return filepath.Join(b.out, "tests", p.Name+".test")
}

// programs builds the guest's /init and the project's commands.
func (b *builder) programs() error { return b.once("programs", b.buildPrograms) }

func (b *builder) buildPrograms() error {
	if err := b.goCmd("build", "-o", filepath.Join(b.out, "init"), "./cmd/rdmavm"); err != nil {
		return err
	}
	bin := filepath.Join(b.out, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	return b.goCmd("build", "-o", bin+"/", "./cmd/...")
}

// harness builds the benchmark harness (hack/benchcmp), for bench and
// profile, and returns the binary's path.
func (b *builder) harness() (string, error) {
	out := filepath.Join(b.out, "benchcmp")
	return out, b.goCmd("build", "-o", out, "./hack/benchcmp")
}

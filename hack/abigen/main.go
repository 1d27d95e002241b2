// Command abigen makes and checks the numbers of internal/abi's layout and
// constant tests: the C compiler's sizeof, offsetof, _Alignof and constant
// values for the kernel's RDMA uapi headers, which the tests compare with
// unsafe.Sizeof and friends of the Go mirror.
//
// abi.spec lists every row: the C expression, the Go expression and the
// header (or kernel-internal block) it comes from. abigen writes a C probe
// of those rows, compiles it with gcc against a directory of headers and
// reads the values out of the object file (see probe.go).
//
//	go run ./hack/abigen -headers DIR          # write the tables
//	go run ./hack/abigen -headers DIR -check   # check them against DIR
//
// DIR holds rdma/*.h: a kernel tree's include/uapi, or /usr/include. The
// few kernel-internal enums (include/rdma/ib_verbs.h, rdma_cm.h, ib_cm.h)
// and struct cma_hdr (drivers/infiniband/core/cma.c) are no uapi; abigen
// copies their blocks from the kernel source tree given by -kernel
// (by default DIR/../.. when DIR is a tree's include/uapi) into the probe.
// Without one, those rows are not checked, and are listed as such.
//
// The checked-in tables come from the newest kernel the project runs on
// (make abi-check says which); every row must exist there. -check takes any
// kernel's headers: every row they have must match the tables; the rows they
// lack (older kernels miss newer structs, fields and constants) are listed,
// not failed. make abi-check runs it for each of KERNELS.
package main

import (
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

//go:embed abi.spec
var specText string

func main() {
	headers := flag.String("headers", "", "directory with the uapi headers `rdma/*.h` (a kernel tree's include/uapi, or /usr/include)")
	kernel := flag.String("kernel", "", "kernel source tree for the kernel-internal blocks (default: DIR/../.. if it has include/rdma/ib_verbs.h); \"none\" for none")
	check := flag.Bool("check", false, "check the checked-in tables against these headers instead of writing them")
	outDir := flag.String("o", "", "directory of the generated tables (default: internal/abi of this module)")
	arch := flag.String("arch", runtime.GOARCH, "amd64 or arm64: the C target (its compiler is gcc, or the cross gcc)")
	cc := flag.String("cc", "", "C compiler (default: gcc for the host's arch, else the cross gcc of -arch)")
	from := flag.String("from", "", "what the headers are, for the generated files' first line (default: DIR's VERSION file or DIR)")
	keep := flag.Bool("keep", false, "keep the probe's temp directory")
	verbose := flag.Bool("v", false, "list every absent row, not one line per struct")
	files := flag.Bool("files", false, "print the kernel tree's files the probe reads, as tar patterns, and stop")
	flag.Parse()
	if *files {
		// For make abi-check, which extracts just these from a source
		// tarball.
		s, err := parseSpec(specText)
		if err != nil {
			fmt.Fprintln(os.Stderr, "abigen:", err)
			os.Exit(1)
		}
		fmt.Println("include/uapi/rdma/*")
		seen := map[string]bool{}
		for _, b := range s.blocks {
			if !seen[b.file] {
				seen[b.file] = true
				fmt.Println(b.file)
			}
		}
		return
	}
	if *headers == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*headers, *kernel, *outDir, *arch, *cc, *from, *check, *keep, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "abigen:", err)
		os.Exit(1)
	}
}

func run(headers, kernel, outDir, arch, cc, from string, check, keep, verbose bool) error {
	start := time.Now()
	s, err := parseSpec(specText)
	if err != nil {
		return err
	}
	// The probe compiles in a temp dir.
	if headers, err = filepath.Abs(headers); err != nil {
		return err
	}
	if kernel == "" {
		kernel = defaultKernel(headers)
	} else if kernel == "none" {
		kernel = ""
	} else if kernel, err = filepath.Abs(kernel); err != nil {
		return err
	}
	if cc == "" {
		cc, err = compilerFor(arch)
		if err != nil {
			return err
		}
	}
	if outDir == "" {
		if outDir, err = abiDir(); err != nil {
			return err
		}
	}
	if from == "" {
		from = describe(headers, kernel)
	}
	res, err := probe(s, probeConfig{cc: cc, headers: headers, kernel: kernel, keep: keep, arch: arch})
	if err != nil {
		return err
	}
	took := time.Since(start).Round(10 * time.Millisecond)

	if !check {
		// The tables are the newest kernel's: all of it must be there.
		if len(res.missing)+len(res.absent)+len(res.unchecked) > 0 {
			report(os.Stderr, s, res, true)
			return errors.New("cannot write the tables from headers that lack rows; use the newest kernel's, with -kernel")
		}
		files, err := generate(s, res, from+" ("+res.compiler+", "+arch+")")
		if err != nil {
			return err
		}
		for name, src := range files {
			if err := os.WriteFile(filepath.Join(outDir, name), src, 0o644); err != nil {
				return err
			}
		}
		fmt.Printf("abigen: wrote %d rows from %s to %s (%d compiles, %s)\n", len(s.rows), from, outDir, res.compiles, took)
		return nil
	}

	tables, err := readTables(outDir)
	if err != nil {
		return err
	}
	bad, varied, stale := compare(s, res, tables)
	fmt.Printf("abigen: %s, %s (%s): %d of %d rows checked, %d absent, %d not checked (%d compiles, %s)\n",
		from, arch, res.compiler, len(res.values), len(s.rows), len(res.absent), len(res.unchecked), res.compiles, took)
	report(os.Stdout, s, res, verbose)
	sort.Strings(stale)
	for _, m := range stale {
		fmt.Println("  stale:", m)
	}
	for _, m := range varied {
		fmt.Printf("  differs, as kernels number it differently: %s: C %d, table %d (%s)\n", m.r.key(), m.got.n, m.want.n, m.r.section)
	}
	for _, m := range bad {
		if m.r.kind == kString {
			fmt.Printf("  MISMATCH %s: C %q, table %q (abi.spec:%d)\n", m.r.key(), m.got.s, m.want.s, m.r.line)
		} else {
			fmt.Printf("  MISMATCH %s: C %d (%#x), table %d (%#x) (abi.spec:%d)\n", m.r.key(), m.got.n, m.got.n, m.want.n, m.want.n, m.r.line)
		}
	}
	if len(stale) > 0 {
		return errors.New("the tables do not match abi.spec: run go generate ./internal/abi")
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d rows differ from the tables", len(bad))
	}
	return nil
}

// report lists what the probe could not check: headers and blocks these
// sources lack, the rows absent from them (a struct with all its fields
// as one line, unless verbose), and the kernel-internal rows without a
// kernel tree.
func report(w *os.File, s *spec, res *probeResult, verbose bool) {
	for _, m := range res.missing {
		fmt.Fprintln(w, "  missing:", m)
	}
	absent := map[*row]bool{}
	for _, r := range res.absent {
		absent[r] = true
	}
	fields := map[*row]int{}
	for _, r := range res.absent {
		if r.kind == kOffsetof && absent[r.layout] {
			fields[r.layout]++
		}
	}
	for _, r := range res.absent {
		if !verbose && r.kind == kOffsetof && absent[r.layout] {
			continue
		}
		more := ""
		if n := fields[r]; n > 0 && !verbose {
			more = fmt.Sprintf(" and its %d fields", n)
		}
		fmt.Fprintf(w, "  absent: %s%s (%s)\n", r.key(), more, r.section)
	}
	if len(res.unchecked) > 0 {
		var files []string
		seen := map[string]bool{}
		for _, r := range res.unchecked {
			f := strings.Fields(r.section)[1] // kernel FILE KIND NAME
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
		fmt.Fprintf(w, "  not checked: %d kernel-internal rows, for want of a kernel tree (%s)\n",
			len(res.unchecked), strings.Join(files, ", "))
	}
}

// defaultKernel is the kernel tree around a tree's include/uapi, if it
// has the kernel-internal headers.
func defaultKernel(headers string) string {
	abs, err := filepath.Abs(headers)
	if err != nil || filepath.Base(abs) != "uapi" || filepath.Base(filepath.Dir(abs)) != "include" {
		return ""
	}
	root := filepath.Dir(filepath.Dir(abs))
	if _, err := os.Stat(filepath.Join(root, "include", "rdma", "ib_verbs.h")); err != nil {
		return ""
	}
	return root
}

// describe names the headers: by the VERSION file make abi-check leaves in
// the kernel tree it extracts, else by directory.
func describe(headers, kernel string) string {
	if kernel != "" {
		if v, err := os.ReadFile(filepath.Join(kernel, "VERSION")); err == nil {
			return "the Linux " + strings.TrimSpace(string(v)) + " headers"
		}
	}
	return "the headers in " + headers
}

func compilerFor(arch string) (string, error) {
	cross := map[string]string{"amd64": "x86_64-linux-gnu-gcc", "arm64": "aarch64-linux-gnu-gcc"}[arch]
	if cross == "" {
		return "", fmt.Errorf("-arch %s: want amd64 or arm64", arch)
	}
	if arch == runtime.GOARCH {
		return "gcc", nil
	}
	return cross, nil
}

// abiDir is internal/abi of the module abigen runs in (go run from the
// top, or go generate in internal/abi).
func abiDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "internal", "abi"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory; use -o")
		}
		dir = parent
	}
}

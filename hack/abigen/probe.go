package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The probe is a C file of constant definitions, one per row and line:
//
//	const unsigned long long abigen_12[2] = {(offsetof(struct x, y)), sizeof(offsetof(struct x, y))};
//
// compiled (never run) into an object file, from whose symbols the values
// are read. Not running it means a cross compiler is enough for another
// architecture. A row that does not compile (a struct, member or constant
// these headers lack, or an alternative spelling) fails on its own line:
// its next alternative is tried, or it is left out as absent, and the file
// is compiled again, so a kernel costs a few compiles, not one per row.

// value is what the probe found for a row.
type value struct {
	n   uint64
	s   string
	alt int // which C alternative compiled
}

type probeResult struct {
	values    map[*row]value
	absent    []*row // the headers lack them
	unchecked []*row // kernel-internal rows without a kernel tree
	missing   []string
	compiles  int
	compiler  string
}

type probeConfig struct {
	cc      string
	headers string // has rdma/*.h
	kernel  string // kernel source tree, or ""
	keep    bool   // leave the temp dir, for debugging
	arch    string // amd64 or arm64: what the object file must be
}

// kernelShims are the few kernel macros and types that the copied blocks
// use, defined the same way for user space.
const kernelShims = `typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
#define BIT(n) (1UL << (n))
#define BIT_ULL(n) (1ULL << (n))
#define GENMASK(h, l) (((~0UL) - (1UL << (l)) + 1) & (~0UL >> (8 * sizeof(long) - 1 - (h))))
`

func probe(s *spec, cfg probeConfig) (*probeResult, error) {
	res := &probeResult{values: map[*row]value{}}
	dir, err := os.MkdirTemp("", "abigen")
	if err != nil {
		return nil, err
	}
	if cfg.keep {
		fmt.Fprintln(os.Stderr, "abigen: probe in", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	out, err := exec.Command(cfg.cc, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", cfg.cc, err)
	}
	res.compiler, _, _ = strings.Cut(string(out), "\n")

	var head bytes.Buffer
	head.WriteString("/* Written by hack/abigen: a probe, compiled and never run. */\n")
	head.WriteString("#include <stddef.h>\n#include <linux/types.h>\n")
	for _, h := range s.uapi {
		if _, err := os.Stat(filepath.Join(cfg.headers, h)); err != nil {
			res.missing = append(res.missing, h)
			continue
		}
		fmt.Fprintf(&head, "#include <%s>\n", h)
	}
	if cfg.kernel != "" {
		head.WriteString(kernelShims)
		for _, b := range s.blocks {
			text, err := extractBlock(filepath.Join(cfg.kernel, b.file), b.kind, b.name)
			if err != nil {
				return nil, err
			}
			if text == "" {
				res.missing = append(res.missing, b.String())
				continue
			}
			fmt.Fprintf(&head, "/* %s */\n%s\n", b, text)
		}
	}

	// alt[r] is the alternative tried next; -1 once a row is out.
	alt := map[*row]int{}
	var rows []*row
	for _, r := range s.rows {
		if r.kernel && cfg.kernel == "" {
			res.unchecked = append(res.unchecked, r)
			continue
		}
		rows = append(rows, r)
	}
	errLine := regexp.MustCompile(`^probe\.c:(\d+):\d+: (error|note):`)
	for {
		var src bytes.Buffer
		src.Write(head.Bytes())
		line := bytes.Count(head.Bytes(), []byte("\n")) + 1
		at := map[int]*row{}
		for i, r := range rows {
			a := alt[r]
			if a < 0 {
				continue
			}
			at[line] = r
			line++
			if r.kind == kString {
				fmt.Fprintf(&src, "const char abigen_%d[] = %s;\n", i, r.c[a])
			} else {
				// The value and the size of its type: an enum
				// constant is an int, so 1 << 31 is negative in C and
				// 0x80000000 as the flag Go means.
				fmt.Fprintf(&src, "const unsigned long long abigen_%d[2] = {(%s), sizeof(%s)};\n", i, r.c[a], r.c[a])
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "probe.c"), src.Bytes(), 0o644); err != nil {
			return nil, err
		}
		args := []string{"-std=gnu11", "-c", "-w", "-fno-diagnostics-show-caret", "-I", cfg.headers, "-o", "probe.o", "probe.c"}
		cmd := exec.Command(cfg.cc, args...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		res.compiles++
		err := cmd.Run()
		if err == nil {
			break
		}
		// Each error names a line of the probe, or, in a macro from a
		// header, is followed by notes that do. A row's error takes it to
		// its next alternative; an error elsewhere is ours, not the
		// headers'.
		failed := map[*row]bool{}
		var pending string // an error not yet placed on a row
		flush := func() error {
			if pending != "" {
				return fmt.Errorf("%s failed outside the rows:\n%s\n%s", cfg.cc, pending, stderr.String())
			}
			return nil
		}
		for _, l := range strings.Split(stderr.String(), "\n") {
			m := errLine.FindStringSubmatch(l)
			isErr := strings.Contains(l, ": error:") || strings.Contains(l, ": fatal error:")
			if isErr {
				if err := flush(); err != nil {
					return nil, err
				}
				pending = l
			}
			if m == nil || pending == "" {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			if r := at[n]; r != nil {
				failed[r] = true
				pending = ""
			}
		}
		if err := flush(); err != nil {
			return nil, err
		}
		if len(failed) == 0 {
			return nil, fmt.Errorf("%s: %v\n%s", cfg.cc, err, stderr.String())
		}
		for r := range failed {
			if alt[r]++; alt[r] == len(r.c) {
				alt[r] = -1
			}
		}
	}

	f, err := elf.Open(filepath.Join(dir, "probe.o"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[cfg.arch]; f.Machine != want {
		return nil, fmt.Errorf("%s made a %v object, not %s", cfg.cc, f.Machine, cfg.arch)
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	bySym := map[string]elf.Symbol{}
	for _, sym := range syms {
		bySym[sym.Name] = sym
	}
	for i, r := range rows {
		if alt[r] < 0 {
			res.absent = append(res.absent, r)
			continue
		}
		sym, ok := bySym[fmt.Sprintf("abigen_%d", i)]
		if !ok || int(sym.Section) >= len(f.Sections) {
			return nil, fmt.Errorf("probe.o has no abigen_%d (%s)", i, r.key())
		}
		data := make([]byte, sym.Size)
		if sec := f.Sections[sym.Section]; sec.Type != elf.SHT_NOBITS {
			if _, err := sec.ReadAt(data, int64(sym.Value)); err != nil {
				return nil, fmt.Errorf("abigen_%d: %v", i, err)
			}
		}
		v := value{alt: alt[r]}
		if r.kind == kString {
			v.s = string(bytes.TrimRight(data, "\x00"))
		} else if len(data) != 16 {
			return nil, fmt.Errorf("abigen_%d has %d bytes", i, len(data))
		} else {
			v.n = f.ByteOrder.Uint64(data)
			if size := f.ByteOrder.Uint64(data[8:]); size < 8 {
				v.n &= 1<<(8*size) - 1
			}
		}
		res.values[r] = v
	}
	return res, nil
}

// extractBlock returns the text of "KIND NAME {...};" as it starts a line
// in file, or "" when file has no such block; the kernel sources keep these
// definitions at the left margin, closed by "};" alone.
func extractBlock(file, kind, name string) (string, error) {
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	re := regexp.MustCompile(`(?ms)^` + kind + ` ` + regexp.QuoteMeta(name) + ` \{.*?^\};`)
	return string(re.Find(data)), nil
}

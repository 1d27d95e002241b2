// Package kmod reads kernel modules' metadata and orders them for loading,
// so that the test VM needs neither depmod nor modprobe.
package kmod

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Module is a kernel module file and the modules it needs loaded first.
type Module struct {
	Name     string
	Path     string
	Depends  []string
	Vermagic string // the kernel release and options it was built for
}

// compressors are the suffixes Debian's kernels compress modules with
// (6.12 and later ship .ko.xz) and the host command that undoes each. The
// guest's init loads plain ELF files, so modules are decompressed when the
// initramfs is packed rather than relying on the kernel's
// MODULE_INIT_COMPRESSED_FILE, which 6.1 does not have.
var compressors = map[string][]string{
	".xz":  {"xz", "-dc"},
	".zst": {"zstd", "-dcq"},
}

// Contents returns the ELF bytes of the module file at path, decompressing
// a .ko.xz or .ko.zst.
func Contents(path string) ([]byte, error) {
	cmd, ok := compressors[filepath.Ext(path)]
	if !ok {
		return os.ReadFile(path)
	}
	var stderr bytes.Buffer
	c := exec.Command(cmd[0], append(cmd[1:], path)...)
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return nil, fmt.Errorf("kmod: %s %s: %w: %s", strings.Join(cmd, " "), path, err, stderr.String())
	}
	return out, nil
}

// isModule reports whether a file name is a kernel module, compressed or
// not.
func isModule(name string) bool {
	if _, ok := compressors[filepath.Ext(name)]; ok {
		name = strings.TrimSuffix(name, filepath.Ext(name))
	}
	return strings.HasSuffix(name, ".ko")
}

// Read parses the .modinfo section of the module file at path.
func Read(path string) (Module, error) {
	data, err := Contents(path)
	if err != nil {
		return Module{}, err
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return Module{}, fmt.Errorf("kmod: %s: %w", path, err)
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return Module{}, fmt.Errorf("kmod: %s: no .modinfo section", path)
	}
	info, err := sec.Data()
	if err != nil {
		return Module{}, fmt.Errorf("kmod: %s: %w", path, err)
	}
	m := ParseModinfo(info)
	m.Path = path
	if m.Name == "" {
		m.Name = NameOf(path)
	}
	return m, nil
}

// ParseModinfo parses the NUL-separated key=value entries of a .modinfo
// section: the name, dependencies and vermagic.
func ParseModinfo(data []byte) Module {
	var m Module
	for _, kv := range bytes.Split(data, []byte{0}) {
		k, v, ok := strings.Cut(string(kv), "=")
		if !ok {
			continue
		}
		switch k {
		case "name":
			m.Name = v
		case "vermagic":
			m.Vermagic = v
		case "depends":
			for _, d := range strings.Split(v, ",") {
				if d != "" {
					m.Depends = append(m.Depends, normalize(d))
				}
			}
		}
	}
	return m
}

// NameOf returns the module name of a .ko, .ko.xz or .ko.zst path: the
// base name without the suffixes, with dashes as underscores, as the kernel
// names modules.
func NameOf(path string) string {
	base := filepath.Base(path)
	if _, ok := compressors[filepath.Ext(base)]; ok {
		base = strings.TrimSuffix(base, filepath.Ext(base))
	}
	return normalize(strings.TrimSuffix(base, ".ko"))
}

func normalize(name string) string { return strings.ReplaceAll(name, "-", "_") }

// Index maps module names to the .ko files under dir.
func Index(dir string) (map[string]string, error) {
	idx := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && isModule(p) {
			idx[NameOf(p)] = p
		}
		return nil
	})
	return idx, err
}

// Closure reads the roots and everything they depend on from the index,
// and returns them in load order. A root missing from the index is an
// error, unless optional lists it.
func Closure(index map[string]string, roots []string, optional ...string) ([]Module, error) {
	skip := map[string]bool{}
	for _, o := range optional {
		skip[o] = true
	}
	mods := map[string]Module{}
	var visit func(name string, required bool) error
	visit = func(name string, required bool) error {
		if _, ok := mods[name]; ok {
			return nil
		}
		path, ok := index[name]
		if !ok {
			if !required {
				return nil
			}
			return fmt.Errorf("kmod: module %s not found", name)
		}
		m, err := Read(path)
		if err != nil {
			return err
		}
		mods[name] = m
		for _, d := range m.Depends {
			if err := visit(d, true); err != nil {
				return fmt.Errorf("%w (needed by %s)", err, name)
			}
		}
		return nil
	}
	for _, r := range roots {
		if err := visit(r, !skip[r]); err != nil {
			return nil, err
		}
	}
	list := make([]Module, 0, len(mods))
	for _, m := range mods {
		list = append(list, m)
	}
	return Order(list)
}

// Order sorts modules so that each comes after the modules it depends on.
// Dependencies outside the list are assumed loaded (built in). Ties keep
// name order, so the result is the same on every run.
func Order(mods []Module) ([]Module, error) {
	byName := map[string]Module{}
	for _, m := range mods {
		byName[m.Name] = m
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)

	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	var out []Module
	var visit func(name string, chain []string) error
	visit = func(name string, chain []string) error {
		m, ok := byName[name]
		if !ok {
			return nil
		}
		switch state[name] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("kmod: dependency cycle: %s", strings.Join(append(chain, name), " -> "))
		}
		state[name] = visiting
		for _, d := range m.Depends {
			if err := visit(d, append(chain, name)); err != nil {
				return err
			}
		}
		state[name] = done
		out = append(out, m)
		return nil
	}
	for _, n := range names {
		if err := visit(n, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

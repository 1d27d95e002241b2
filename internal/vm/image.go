// Package vm boots Debian's kernel in QEMU with soft-RoCE (rxe0) and
// SoftiWARP (siw0) and runs programs inside: the engine of cmd/rdmavm,
// which users run their tests with, and of hack/vm, which runs
// purerdma's own. It writes the initramfs (Image), boots one guest or two
// on one wire (Boot, BootPair) and reads the outcome from the console;
// fetch fills the kernel cache, guest is the guest's /init, plan the
// contract between the two.
package vm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/purerdma/purerdma/internal/vm/cpio"
	"github.com/purerdma/purerdma/internal/vm/fetch"
	"github.com/purerdma/purerdma/internal/vm/kmod"
	"github.com/purerdma/purerdma/internal/vm/plan"
)

// moduleRoots are the modules the guest needs; their dependencies follow.
var moduleRoots = []string{"rdma_rxe", "siw", "rdma_ucm", "ib_uverbs", "veth"}

// optionalModules are packed when the kernel has them. crc32_generic and
// crc32c_generic are crypto algorithms that rxe (before 6.14) and siw
// request by name, so no depends= line names them; from 6.14 rxe calls
// the crc32 library, and the crypto API's algorithms are
// crc32_cryptoapi and crc32c_cryptoapi.
var optionalModules = []string{"crc32_generic", "crc32c_generic", "crc32_cryptoapi", "crc32c_cryptoapi", "sch_netem"}

// Image describes an initramfs to write: the kernel's modules, the plan
// for init, and host files.
type Image struct {
	Kernel     *fetch.Kernel
	Plan       plan.Plan
	Files      map[string]string // guest path -> host file
	Trees      map[string]string // guest dir -> host dir
	Dirs       []string          // guest directories, empty or not
	HostLibs   []string          // host files packed at their own paths
	NICModules []string          // more module roots (the pair's NIC)
}

// NewImage returns an empty image for kernel k and plan p.
func NewImage(k *fetch.Kernel, p plan.Plan) *Image {
	return &Image{Kernel: k, Plan: p, Files: map[string]string{}, Trees: map[string]string{}}
}

// Write writes the initramfs to path.
func (im *Image) Write(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := cpio.NewWriter(f)
	// Merged /usr, as on the host, so host libraries resolve by any name.
	for _, l := range []string{"bin", "lib", "lib64", "sbin"} {
		w.Symlink(l, "usr/"+l)
	}
	for _, d := range []string{"dev", "proc", "sys", "tmp", "run", "etc", "usr/bin", "usr/lib", "usr/lib64", "usr/sbin"} {
		w.Dir(d)
	}
	if err := im.modules(w); err != nil {
		return err
	}
	pj, err := json.MarshalIndent(im.Plan, "", "  ")
	if err != nil {
		return err
	}
	w.File(plan.Path, 0o644, pj)
	for _, d := range im.Dirs {
		w.Dir(d)
	}
	for guest, host := range im.Files {
		if err := w.CopyFile(guest, host); err != nil {
			return err
		}
	}
	for guest, host := range im.Trees {
		if err := w.CopyTree(guest, host); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, h := range im.HostLibs {
		if err := addHostFile(w, h, seen); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return f.Close()
}

func (im *Image) modules(w *cpio.Writer) error {
	idx, err := kmod.Index(im.Kernel.Modules)
	if err != nil {
		return err
	}
	if _, err := os.Stat(im.Kernel.Siw); err == nil {
		idx["siw"] = im.Kernel.Siw
	}
	roots := slices.Concat(moduleRoots, optionalModules, im.NICModules)
	mods, err := kmod.Closure(idx, roots, append([]string{"siw"}, optionalModules...)...)
	if err != nil {
		return err
	}
	for _, m := range mods {
		data, err := kmod.Contents(m.Path)
		if err != nil {
			return err
		}
		if err := w.File(filepath.Join(plan.ModulesDir, m.Name+".ko"), 0o644, data); err != nil {
			return err
		}
	}
	return nil
}

// addHostFile packs a host file at the path it has on the host, and, where
// the path is a symlink, the link and what it points to, so that every name
// the dynamic loader may use resolves in the guest.
func addHostFile(w *cpio.Writer, p string, seen map[string]bool) error {
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return err
	}
	p = filepath.Join(dir, filepath.Base(p))
	if seen[p] {
		return nil
	}
	seen[p] = true
	st, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if st.Mode()&os.ModeSymlink == 0 {
		return w.CopyFile(p, p)
	}
	target, err := os.Readlink(p)
	if err != nil {
		return err
	}
	if err := w.Symlink(p, target); err != nil {
		return err
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	if err := addHostFile(w, target, seen); err != nil {
		return fmt.Errorf("%s -> %w", p, err)
	}
	return nil
}

// SizeOf is the size of the file at path in MiB, for the log.
func SizeOf(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%d MiB", st.Size()>>20)
}

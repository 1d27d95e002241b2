package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/purerdma/purerdma/hack/vm/internal/cpio"
	"github.com/purerdma/purerdma/hack/vm/internal/fetch"
	"github.com/purerdma/purerdma/hack/vm/internal/kmod"
	"github.com/purerdma/purerdma/hack/vm/internal/plan"
)

// moduleRoots are the modules the guest needs; their dependencies follow.
// crc32_generic and crc32c_generic are crypto algorithms that rxe and siw
// request by name, so no depends= line names them.
var moduleRoots = []string{"crc32_generic", "crc32c_generic", "rdma_rxe", "siw", "rdma_ucm", "ib_uverbs", "veth"}

// optionalModules are packed when the kernel has them.
var optionalModules = []string{"sch_netem"}

// image describes an initramfs to write.
type image struct {
	kernel   *fetch.Kernel
	plan     plan.Plan
	files    map[string]string // guest path -> host file
	trees    map[string]string // guest dir -> host dir
	hostLibs []string          // host files packed at their own paths
	nicMods  []string          // more module roots (the pair command's NIC)
}

func newImage(k *fetch.Kernel, p plan.Plan) *image {
	return &image{kernel: k, plan: p, files: map[string]string{}, trees: map[string]string{}}
}

// write writes the initramfs to path.
func (im *image) write(path string) error {
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
	pj, err := json.MarshalIndent(im.plan, "", "  ")
	if err != nil {
		return err
	}
	w.File(plan.Path, 0o644, pj)
	for guest, host := range im.files {
		if err := w.CopyFile(guest, host); err != nil {
			return err
		}
	}
	for guest, host := range im.trees {
		if err := w.CopyTree(guest, host); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, h := range im.hostLibs {
		if err := addHostFile(w, h, seen); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return f.Close()
}

func (im *image) modules(w *cpio.Writer) error {
	idx, err := kmod.Index(im.kernel.Modules)
	if err != nil {
		return err
	}
	if _, err := os.Stat(im.kernel.Siw); err == nil {
		idx["siw"] = im.kernel.Siw
	}
	roots := slices.Concat(moduleRoots, optionalModules, im.nicMods)
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

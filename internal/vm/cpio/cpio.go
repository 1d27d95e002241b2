// Package cpio writes the "newc" cpio archives that Linux unpacks as an
// initramfs. The kernel takes them uncompressed.
package cpio

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Writer writes a newc archive. Parent directories are created on demand,
// once each, so callers add files by their final path.
type Writer struct {
	w    io.Writer
	ino  uint32
	dirs map[string]bool
	err  error
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w, dirs: map[string]bool{"": true, ".": true}} }

// Dir adds a directory and its parents.
func (w *Writer) Dir(name string) error {
	name = clean(name)
	if w.dirs[name] {
		return w.err
	}
	w.Dir(path.Dir(name))
	w.dirs[name] = true
	return w.entry(name, fs.ModeDir|0o755, nil)
}

// File adds a regular file with the given contents and permission bits.
func (w *Writer) File(name string, perm fs.FileMode, data []byte) error {
	name = clean(name)
	w.Dir(path.Dir(name))
	return w.entry(name, perm&fs.ModePerm, data)
}

// Symlink adds a symbolic link name pointing to target.
func (w *Writer) Symlink(name, target string) error {
	name = clean(name)
	w.Dir(path.Dir(name))
	return w.entry(name, fs.ModeSymlink|0o777, []byte(target))
}

// CopyFile adds the host file src as name, keeping its permission bits.
func (w *Writer) CopyFile(name, src string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	return w.File(name, st.Mode(), data)
}

// CopyTree adds every file under the host directory src below name.
func (w *Writer) CopyTree(name, src string) error {
	var paths []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := w.CopyFile(path.Join(name, strings.TrimPrefix(p, src)), p); err != nil {
			return err
		}
	}
	return nil
}

// Close writes the trailer. It does not close the underlying writer.
func (w *Writer) Close() error { return w.write(trailer, 0, 0, 1, nil) }

const trailer = "TRAILER!!!"

// modeBits converts a fs.FileMode to the st_mode of the archive.
func modeBits(m fs.FileMode) uint32 {
	bits := uint32(m.Perm())
	switch {
	case m&fs.ModeDir != 0:
		bits |= 0o040000
	case m&fs.ModeSymlink != 0:
		bits |= 0o120000
	default:
		bits |= 0o100000
	}
	return bits
}

func (w *Writer) entry(name string, mode fs.FileMode, data []byte) error {
	w.ino++
	nlink := 1
	if mode&fs.ModeDir != 0 {
		nlink = 2
	}
	return w.write(name, w.ino, modeBits(mode), nlink, data)
}

// write emits one header (magic, ino, mode, uid, gid, nlink, mtime,
// filesize, devmajor, devminor, rdevmajor, rdevminor, namesize, check),
// the name and the data, each padded to 4 bytes.
func (w *Writer) write(name string, ino, mode uint32, nlink int, data []byte) error {
	if w.err != nil {
		return w.err
	}
	hdr := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	buf := make([]byte, 0, len(hdr)+len(name)+8+len(data))
	buf = append(buf, hdr...)
	buf = append(buf, name...)
	buf = append(buf, 0)
	buf = pad4(buf)
	buf = append(buf, data...)
	buf = pad4(buf)
	_, w.err = w.w.Write(buf)
	return w.err
}

func pad4(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func clean(name string) string { return strings.TrimPrefix(path.Clean("/"+name), "/") }

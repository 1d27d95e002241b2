package guest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/vm/kmod"
)

// loadModules loads every module in dir, each after the modules its
// .modinfo says it depends on.
func loadModules(dir string) error {
	paths, err := filepath.Glob(filepath.Join(dir, "*.ko"))
	if err != nil {
		return err
	}
	var mods []kmod.Module
	for _, p := range paths {
		m, err := kmod.Read(p)
		if err != nil {
			return err
		}
		mods = append(mods, m)
	}
	mods, err = kmod.Order(mods)
	if err != nil {
		return err
	}
	for _, m := range mods {
		if err := finit(m.Path); err != nil {
			return fmt.Errorf("load %s: %w", m.Name, err)
		}
	}
	return nil
}

func finit(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	err = unix.FinitModule(int(f.Fd()), "", 0)
	if errors.Is(err, unix.EEXIST) {
		return nil
	}
	return err
}

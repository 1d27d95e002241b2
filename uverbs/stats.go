package uverbs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/purerdma/purerdma/internal/rdmanl"
)

// Resource is one line item of a device's resource summary: how many
// objects of one kind (pd, cq, qp, cm_id, mr, ctx, srq) the device has.
type Resource struct {
	Name  string
	Count uint64
}

// Resources returns the device's resource summary, what `rdma resource
// show DEV` prints, in the order the kernel sends it (RDMA netlink
// RES_GET). The counts are the kernel's for the whole device: the objects
// of every process and of the kernel itself (the GSI QP, PD and CQ of a
// RoCE port, for example), not only this process's.
func (d Device) Resources() ([]Resource, error) {
	if d.Name == "" {
		return nil, fmt.Errorf("uverbs: resources: device without a name: %w", ErrInvalid)
	}
	c, err := rdmanl.Dial()
	if err != nil {
		return nil, fmt.Errorf("uverbs: resources of %s: RDMA netlink: %w", d.Name, err)
	}
	defer c.Close()
	// By name: a Device found through sysfs has no netlink index, and an
	// index can be reused by a device created after d was listed.
	sums, err := c.ResourceSummaries()
	if err != nil {
		return nil, fmt.Errorf("uverbs: resources of %s: %w", d.Name, err)
	}
	for _, s := range sums {
		if s.DevName == d.Name {
			res := make([]Resource, len(s.Resources))
			for i, r := range s.Resources {
				res[i] = Resource{Name: r.Name, Count: r.Count}
			}
			return res, nil
		}
	}
	return nil, fmt.Errorf("uverbs: resources of %s: %w", d.Name, ErrNoDevice)
}

// Counter is one port counter.
type Counter struct {
	Name  string
	Value uint64
}

func portCounters(root, dev string, port int) ([]Counter, error) {
	if dev == "" || strings.ContainsRune(dev, '/') || dev == "." || dev == ".." {
		return nil, fmt.Errorf("uverbs: port counters: device name %q: %w", dev, ErrInvalid)
	}
	devDir := filepath.Join(root, "class/infiniband", dev)
	if _, err := os.Stat(devDir); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("uverbs: port counters of %s: %w", dev, ErrNoDevice)
	}
	portDir := filepath.Join(devDir, "ports", strconv.Itoa(port))
	if _, err := os.Stat(portDir); port < 1 || errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("uverbs: port counters of %s: port %d: %w", dev, port, ErrInvalid)
	}
	var all []Counter
	for _, sub := range []string{"hw_counters", "counters"} {
		cs, err := readCounters(filepath.Join(portDir, sub))
		if err != nil {
			return nil, fmt.Errorf("uverbs: port counters of %s/%d: %w", dev, port, err)
		}
		all = append(all, cs...)
	}
	return all, nil
}

// readCounters reads every counter file of dir, which may not exist. The
// hw_counters directory also holds lifespan, the driver's caching time in
// milliseconds, which is a setting and not a counter.
func readCounters(dir string) ([]Counter, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var cs []Counter
	for _, e := range ents {
		if e.IsDir() || e.Name() == "lifespan" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", filepath.Base(dir), e.Name(), err)
		}
		cs = append(cs, Counter{Name: e.Name(), Value: v})
	}
	return cs, nil
}

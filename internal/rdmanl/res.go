package rdmanl

import (
	"fmt"
	"strings"
)

// ResourceSummary is how many objects of each kind a device has, as
// RDMA_NLDEV_CMD_RES_GET describes it and `rdma resource show` prints it.
//
// The counts are the kernel's resource tracking (restrack) for the whole
// device: objects of every process and of the kernel itself (the GSI QP,
// PD and CQ that the MAD layer keeps on each RoCE port, for example).
type ResourceSummary struct {
	DevIndex uint32
	DevName  string
	// Resources are in the order the kernel sends them. Linux 6.1 sends
	// pd, cq, qp, cm_id, mr, ctx and srq; older kernels send fewer.
	Resources []Resource
}

// Resource is one entry of a ResourceSummary.
type Resource struct {
	Name  string // "pd", "cq", "qp", "cm_id", "mr", "ctx", "srq"
	Count uint64 // objects of this kind that exist now
}

// Count returns the count of the resource called name, and whether the
// kernel reported that resource at all.
func (s ResourceSummary) Count(name string) (uint64, bool) {
	for _, r := range s.Resources {
		if r.Name == name {
			return r.Count, true
		}
	}
	return 0, false
}

// Map returns the counts by resource name.
func (s ResourceSummary) Map() map[string]uint64 {
	m := make(map[string]uint64, len(s.Resources))
	for _, r := range s.Resources {
		m[r.Name] = r.Count
	}
	return m
}

// String formats s as iproute2's `rdma resource show` does, without its
// trailing blank:
//
//	0: rxe0: pd 1 cq 1 qp 1 cm_id 0 mr 0 ctx 0 srq 0
func (s ResourceSummary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d: %s:", s.DevIndex, s.DevName)
	for _, r := range s.Resources {
		fmt.Fprintf(&b, " %s %d", r.Name, r.Count)
	}
	return b.String()
}

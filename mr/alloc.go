package mr

import (
	"fmt"
	"sort"
	"sync"
	"unsafe"

	"github.com/purerdma/purerdma/internal/verbs"
)

// ErrNotMapped is returned by Register for memory that did not come from
// Alloc or Mapped, such as a Go-allocated []byte. Such memory is an
// invalid argument here, so it is a kind of uverbs.ErrInvalid and matches
// unix.EINVAL.
var ErrNotMapped = verbs.NewSentinel("memory is not from mr.Alloc or mr.Mapped", verbs.ErrInvalid)

// ErrRegistered is returned by Free and Forget while a region of the
// memory is registered. Like a PD with regions, the memory is in use: it
// is a kind of uverbs.ErrBusy and matches unix.EBUSY.
var ErrRegistered = verbs.NewSentinel("memory is still registered", verbs.ErrBusy)

// mapping is a range of memory outside the Go heap.
type mapping struct {
	start, end uintptr
	owned      bool // from Alloc: Free unmaps it
	regs       int  // registrations inside it
}

// mappings holds the known ranges, sorted by start.
var mappings struct {
	sync.Mutex
	list []*mapping
}

// Free unmaps memory returned by Alloc.
func Free(b []byte) error {
	mappings.Lock()
	defer mappings.Unlock()
	i, m := find(base(b), len(b))
	switch {
	case m == nil || !m.owned || m.start != base(b):
		return fmt.Errorf("mr: free: %w", ErrNotMapped)
	case m.regs > 0:
		return fmt.Errorf("mr: free: %w (%d regions)", ErrRegistered, m.regs)
	}
	if err := munmap(b); err != nil {
		return fmt.Errorf("mr: free: %w", err)
	}
	mappings.list = append(mappings.list[:i], mappings.list[i+1:]...)
	return nil
}

// Mapped declares that b lies in a mapping the caller made (mmap of a file
// or of device memory, say) and keeps mapped while any region of it is
// registered, so that Register accepts it.
func Mapped(b []byte) {
	if len(b) == 0 {
		return
	}
	add(&mapping{start: base(b), end: base(b) + uintptr(len(b))})
}

// Forget undoes Mapped.
func Forget(b []byte) error {
	mappings.Lock()
	defer mappings.Unlock()
	i, m := find(base(b), len(b))
	switch {
	case m == nil || m.owned:
		return fmt.Errorf("mr: forget: %w", ErrNotMapped)
	case m.regs > 0:
		return fmt.Errorf("mr: forget: %w", ErrRegistered)
	}
	mappings.list = append(mappings.list[:i], mappings.list[i+1:]...)
	return nil
}

func add(m *mapping) {
	mappings.Lock()
	defer mappings.Unlock()
	i := sort.Search(len(mappings.list), func(i int) bool { return mappings.list[i].start >= m.start })
	mappings.list = append(mappings.list, nil)
	copy(mappings.list[i+1:], mappings.list[i:])
	mappings.list[i] = m
}

// find returns the mapping that holds [p, p+n), with mappings locked.
func find(p uintptr, n int) (int, *mapping) {
	i := sort.Search(len(mappings.list), func(i int) bool { return mappings.list[i].end > p })
	if i < len(mappings.list) {
		if m := mappings.list[i]; m.start <= p && p+uintptr(n) <= m.end {
			return i, m
		}
	}
	return -1, nil
}

// base returns the address of b's first byte.
func base(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&b[0]))
}

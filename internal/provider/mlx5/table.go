package mlx5

import "sync/atomic"

// table maps a 24-bit number (a user index, a QP or an SRQ number) to the
// object CQ polling needs, as libmlx5's two-level tables do: 4096 pages
// of 4096 entries, a page allocated with its first entry and dropped with
// its last. Writers hold context.tabMu; Poll reads without it, as libmlx5
// does, which the atomic pointers make safe in Go's memory model too.
type table[T any] struct {
	page [tableSize]tablePage[T]
}

type tablePage[T any] struct {
	refcnt int // under context.tabMu
	slots  atomic.Pointer[[tableMask + 1]atomic.Pointer[T]]
}

const (
	tableShift = 12
	tableMask  = 1<<tableShift - 1
	tableSize  = 1 << (24 - tableShift)
)

// find returns the object at n, or nil (mlx5_find_uidx, mlx5_find_qp,
// mlx5_find_srq).
func (t *table[T]) find(n uint32) *T {
	s := t.page[(n>>tableShift)%tableSize].slots.Load()
	if s == nil {
		return nil
	}
	return s[n&tableMask].Load()
}

// store puts v at n (mlx5_store_uidx's second half, mlx5_store_qp,
// mlx5_store_srq).
func (t *table[T]) store(n uint32, v *T) {
	p := &t.page[(n>>tableShift)%tableSize]
	if p.refcnt == 0 {
		p.slots.Store(new([tableMask + 1]atomic.Pointer[T]))
	}
	p.refcnt++
	p.slots.Load()[n&tableMask].Store(v)
}

// clear removes n (mlx5_clear_uidx, mlx5_clear_qp, mlx5_clear_srq).
func (t *table[T]) clear(n uint32) {
	p := &t.page[(n>>tableShift)%tableSize]
	if p.refcnt == 0 {
		return
	}
	p.refcnt--
	if p.refcnt == 0 {
		p.slots.Store(nil)
		return
	}
	p.slots.Load()[n&tableMask].Store(nil)
}

// freeIndex is get_free_uidx: the first page not full (a page counts as
// full one entry short of its size), and in it the first free entry; -1 if
// every page is full.
func (t *table[T]) freeIndex() int {
	tind := 0
	for ; tind < tableSize; tind++ {
		if t.page[tind].refcnt < tableMask {
			break
		}
	}
	if tind == tableSize {
		return -1
	}
	s := t.page[tind].slots.Load()
	if t.page[tind].refcnt == 0 || s == nil {
		return tind << tableShift
	}
	i := 0
	for ; i < tableMask+1; i++ {
		if s[i].Load() == nil {
			break
		}
	}
	return tind<<tableShift | i
}

package mlx5

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/purerdma/purerdma/internal/provider/mem"
)

// Doorbell records are the words in host memory through which the device
// learns how far a queue has been filled (QP and SRQ) or consumed (CQ):
// 8 bytes per queue, each in a cache line of its own. They are handed out
// as libmlx5's dbrec.c does, so that a record lands at the same offset of
// its page as libmlx5's would: pages of page-size bytes cut into
// cache-line slots, the lowest free slot of the first page on a list of
// pages with free slots, a new page in front of that list, a page put back
// in front when a slot of a full page is freed, and a page unmapped when
// its last slot is.

// dbrec is one doorbell record: b is its 8 bytes.
type dbrec struct {
	b    []byte
	page *dbPage
	slot int
}

type dbPage struct {
	buf    []byte
	numDB  int
	useCnt int
	free   []uint64 // a set bit is a free slot
}

type dbrecs struct {
	ctx   *context
	mu    sync.Mutex
	avail []*dbPage // pages with free slots, the first first
}

func (d *dbrecs) addPage() (*dbPage, error) {
	ps := d.ctx.pageSize
	buf, err := mem.Alloc(ps)
	if err != nil {
		return nil, fmt.Errorf("mlx5: doorbell record page: %w", err)
	}
	n := ps / d.ctx.cacheLineSize
	p := &dbPage{buf: buf, numDB: n, free: make([]uint64, (n+63)/64)}
	for i := range p.free {
		p.free[i] = ^uint64(0)
	}
	d.avail = append([]*dbPage{p}, d.avail...)
	return p, nil
}

// alloc returns a doorbell record (mlx5_alloc_dbrec).
func (d *dbrecs) alloc() (dbrec, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var p *dbPage
	if len(d.avail) > 0 {
		p = d.avail[0]
	} else {
		var err error
		if p, err = d.addPage(); err != nil {
			return dbrec{}, err
		}
	}
	p.useCnt++
	if p.useCnt == p.numDB {
		d.avail = d.avail[1:]
	}
	i := 0
	for p.free[i] == 0 {
		i++
	}
	j := bits.TrailingZeros64(p.free[i])
	p.free[i] &^= 1 << j
	slot := i*64 + j
	off := slot * d.ctx.cacheLineSize
	// Not cleared: each kind of queue clears the words it uses, as in
	// libmlx5, and an SRQ uses only the first.
	b := p.buf[off : off+8 : off+8]
	return dbrec{b: b, page: p, slot: slot}, nil
}

// free returns a doorbell record (mlx5_free_db).
func (d *dbrecs) free(r dbrec) {
	if r.page == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	p := r.page
	p.free[r.slot/64] |= 1 << (r.slot % 64)
	if p.useCnt == p.numDB {
		d.avail = append([]*dbPage{p}, d.avail...)
	}
	p.useCnt--
	if p.useCnt == 0 {
		for i, q := range d.avail {
			if q == p {
				d.avail = append(d.avail[:i], d.avail[i+1:]...)
				break
			}
		}
		mem.Free(p.buf)
	}
}

// addr is the record's address, for the create commands.
func (r dbrec) addr() uint64 { return mem.Addr(r.b) }

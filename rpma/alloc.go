package rpma

import (
	"github.com/purerdma/purerdma/mr"
)

// AllocMR allocates size bytes outside the Go heap (mr.Alloc) and
// registers them for usage, in one call; the region's Close deregisters
// and frees them. Bytes returns the memory. The peer keeps track of the
// regions it allocated, so that the Close of a Client or Listener that
// made it releases those still open.
func (p *Peer) AllocMR(size int, usage Usage) (*MR, error) {
	if err := p.usable("allocate region"); err != nil {
		return nil, err
	}
	if size <= 0 {
		return nil, inval("allocate a region of %d bytes", size)
	}
	buf, err := mr.Alloc(size)
	if err != nil {
		return nil, provider("allocate region", err)
	}
	m, err := p.RegisterMR(buf, usage)
	if err != nil {
		mr.Free(buf)
		return nil, err
	}
	m.owned, m.peer = buf, p
	p.allocMu.Lock()
	if p.allocated == nil {
		p.allocated = make(map[*MR]struct{})
	}
	p.allocated[m] = struct{}{}
	p.allocMu.Unlock()
	return m, nil
}

// forget drops m from the regions the peer allocated.
func (p *Peer) forget(m *MR) {
	p.allocMu.Lock()
	delete(p.allocated, m)
	p.allocMu.Unlock()
}

// closeAllocated closes the regions AllocMR made that are still open.
func (p *Peer) closeAllocated() error {
	p.allocMu.Lock()
	open := make([]*MR, 0, len(p.allocated))
	for m := range p.allocated {
		open = append(open, m)
	}
	p.allocMu.Unlock()
	var first error
	for _, m := range open {
		if err := m.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

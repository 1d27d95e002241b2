package mr

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/purerdma/purerdma/internal/verbs"
	"github.com/purerdma/purerdma/uverbs"
)

// Buffer is memory from Alloc registered as one region: AllocRegister
// makes both, Close undoes both in the order the device needs.
type Buffer struct {
	mr     *MR
	buf    []byte
	mu     sync.Mutex // serializes Close
	closed atomic.Bool
}

// AllocRegister allocates size bytes with Alloc and registers them with pd
// for access, in one call. Close the Buffer to deregister and free them.
func AllocRegister(pd *uverbs.PD, size int, access uverbs.Access) (*Buffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("mr: alloc and register %d bytes: %w", size, verbs.ErrInvalid)
	}
	buf, err := Alloc(size)
	if err != nil {
		return nil, err
	}
	m, err := Register(pd, buf, access)
	if err != nil {
		Free(buf)
		return nil, err
	}
	return &Buffer{mr: m, buf: buf}, nil
}

// MR returns the region.
func (b *Buffer) MR() *MR {
	if b == nil {
		return nil
	}
	return b.mr
}

// Bytes returns the memory; nil once the Buffer is closed.
func (b *Buffer) Bytes() []byte {
	if b == nil || b.closed.Load() {
		return nil
	}
	return b.buf
}

// Addr returns the memory's address as the device sees it.
func (b *Buffer) Addr() uint64 { return b.MR().Addr() }

// Len returns the size in bytes.
func (b *Buffer) Len() int { return b.MR().Len() }

// LKey returns the local key, for scatter/gather entries.
func (b *Buffer) LKey() uint32 { return b.MR().LKey() }

// RKey returns the remote key, for peers' RDMA reads, writes and atomics.
func (b *Buffer) RKey() uint32 { return b.MR().RKey() }

// SGE returns a scatter/gather entry covering the whole Buffer.
func (b *Buffer) SGE() uverbs.SGE {
	return uverbs.SGE{Addr: b.Addr(), Length: uint32(b.Len()), LKey: b.LKey()}
}

// Close deregisters the region, then frees the memory: the device may
// write into the memory until the deregistration completes, so it is
// unmapped only after. Work requests that use the memory must be done
// (completed or flushed) first. When deregistration fails, nothing is
// freed and Close may be called again. A slice from Bytes must not be
// used after Close. Close is safe to call more than once; later calls
// return nil.
func (b *Buffer) Close() error {
	if b == nil {
		return uverbs.ErrClosed
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return nil
	}
	if err := b.mr.Close(); err != nil {
		return err
	}
	// A later Close retries Free: MR.Close returns nil once closed.
	if err := Free(b.buf); err != nil {
		return err
	}
	b.closed.Store(true)
	return nil
}

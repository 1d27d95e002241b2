package mr

import (
	"fmt"
	"math"

	"github.com/purerdma/purerdma/internal/verbs"
	"github.com/purerdma/purerdma/uverbs"
)

// Pool is a set of fixed-size buffers carved from one registered region,
// for work requests that each need a buffer of their own (receives,
// sends in flight). Get and Put allocate nothing, and may be called from
// any goroutine.
//
// Close fails with ErrBuffersOut while buffers are out, and the pool
// stays usable; once every buffer is back it deregisters the region and
// frees the memory. After Close, Get returns an error matching
// uverbs.ErrClosed and Put does nothing.
type Pool struct {
	mem  *Buffer // nil in the host tests
	size int
	bufs []PoolBuffer
	list freeList
}

// PoolBuffer is one buffer of a Pool, from Get until Put. Its memory must
// not be used after Put, nor while a work request that uses it has not
// completed.
type PoolBuffer struct {
	pool  *Pool
	index int32
	b     []byte
	addr  uint64
}

// NewPool allocates count buffers of size bytes each as one memory block,
// registered with pd for access as one region. Buffer i starts at byte
// i*size of the region: a size that is a multiple of 64 keeps buffers on
// cache lines of their own.
func NewPool(pd *uverbs.PD, size, count int, access uverbs.Access) (*Pool, error) {
	if size <= 0 || count <= 0 || count > math.MaxInt32 || size > math.MaxInt/count || size > math.MaxUint32 {
		return nil, fmt.Errorf("mr: new pool of %d buffers of %d bytes: %w", count, size, verbs.ErrInvalid)
	}
	mem, err := AllocRegister(pd, size*count, access)
	if err != nil {
		return nil, err
	}
	return newPool(mem, mem.Bytes(), mem.Addr(), size, count), nil
}

// newPool carves count buffers of size bytes from b, at device address
// addr.
func newPool(mem *Buffer, b []byte, addr uint64, size, count int) *Pool {
	p := &Pool{mem: mem, size: size, bufs: make([]PoolBuffer, count)}
	for i := range p.bufs {
		off := i * size
		p.bufs[i] = PoolBuffer{pool: p, index: int32(i), b: b[off : off+size : off+size], addr: addr + uint64(off)}
	}
	p.list.init(count)
	return p
}

// Get takes a free buffer. It returns an error matching ErrPoolEmpty when
// all are out, and one matching uverbs.ErrClosed after Close.
func (p *Pool) Get() (*PoolBuffer, error) {
	if p == nil {
		return nil, errGetClosed
	}
	i, err := p.list.get()
	if err != nil {
		return nil, err
	}
	return &p.bufs[i], nil
}

// Put gives b back. Putting a buffer of another pool, or one already put,
// returns an error matching uverbs.ErrInvalid; after Close, Put does
// nothing and returns an error matching uverbs.ErrClosed.
func (p *Pool) Put(b *PoolBuffer) error {
	if p == nil {
		return errPutClosed
	}
	if b == nil || b.pool != p {
		return errPutForeign
	}
	return p.list.put(b.index)
}

// Available returns the number of free buffers; 0 after Close.
func (p *Pool) Available() int {
	if p == nil {
		return 0
	}
	return p.list.available()
}

// Len returns the number of buffers.
func (p *Pool) Len() int {
	if p == nil {
		return 0
	}
	return len(p.bufs)
}

// BufferSize returns the size of each buffer in bytes.
func (p *Pool) BufferSize() int {
	if p == nil {
		return 0
	}
	return p.size
}

// MR returns the region all the buffers lie in.
func (p *Pool) MR() *MR {
	if p == nil {
		return nil
	}
	return p.mem.MR()
}

// Close deregisters the region and frees the memory once every buffer is
// back. While buffers are out it returns an error matching ErrBuffersOut
// (and uverbs.ErrBusy) and changes nothing. It is safe to call more than
// once; when deregistration failed, a later Close tries again.
func (p *Pool) Close() error {
	if p == nil {
		return uverbs.ErrClosed
	}
	if _, err := p.list.close(); err != nil {
		return err
	}
	if p.mem == nil {
		return nil
	}
	return p.mem.Close()
}

// Bytes returns the buffer's memory (BufferSize bytes); nil once the pool
// is closed.
func (b *PoolBuffer) Bytes() []byte {
	if b == nil || b.pool.list.closed.Load() {
		return nil
	}
	return b.b
}

// Index returns the buffer's number in its pool, from 0: a work request
// ID can carry it.
func (b *PoolBuffer) Index() int {
	if b == nil {
		return -1
	}
	return int(b.index)
}

// Addr returns the buffer's address as the device sees it.
func (b *PoolBuffer) Addr() uint64 {
	if b == nil {
		return 0
	}
	return b.addr
}

// Len returns the buffer's size in bytes.
func (b *PoolBuffer) Len() int {
	if b == nil {
		return 0
	}
	return len(b.b)
}

// LKey returns the local key of the pool's region.
func (b *PoolBuffer) LKey() uint32 {
	if b == nil {
		return 0
	}
	return b.pool.mem.LKey()
}

// RKey returns the remote key of the pool's region, for a peer's RDMA
// access to this buffer at Addr.
func (b *PoolBuffer) RKey() uint32 {
	if b == nil {
		return 0
	}
	return b.pool.mem.RKey()
}

// SGE returns a scatter/gather entry covering the first n bytes of the
// buffer; n is clamped to 0..Len.
func (b *PoolBuffer) SGE(n int) uverbs.SGE {
	if b == nil {
		return uverbs.SGE{}
	}
	n = max(0, min(n, len(b.b)))
	return uverbs.SGE{Addr: b.addr, Length: uint32(n), LKey: b.LKey()}
}

package mlx5

import (
	"fmt"
	"sync"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
	"github.com/purerdma/purerdma/internal/provider/mmio"
)

// SRQ is the driver's SRQ as a type uverbs names: its Post,
// reached through a type test rather than the provider interface, reads
// the caller's own requests, which an interface call would make escape.
type SRQ = srq

// srq is a shared receive queue (libmlx5's struct mlx5_srq, without tag
// matching). Its WQEs are not a ring but a free list threaded through
// their next segments: Put takes the WQE at head, the device follows the
// list as it consumes them, and a completion puts the WQE back at tail.
// When the device allows, the buffer has about twice the WQEs asked for,
// and the extra ones form a wait queue that page-faulted WQEs cool down
// in (ODP).
type srq struct {
	ctx *context
	buf []byte
	db  dbrec

	// mu is libmlx5's srq->lock: Put and Flush take it, and so does
	// Poll, which frees WQEs from another goroutine.
	mu        sync.Mutex
	wrid      []uint64
	srqn      uint32
	max       int // WQEs in the buffer
	maxGS     int
	wqeShift  uint
	head      int
	tail      int
	waitqHead int // -1 without a wait queue
	waitqTail int
	counter   uint16 // WQEs handed to the device, in the doorbell record
	pending   uint16
	initTail  int // the WRs the SRQ holds for the application
	inTable   bool
	closed    bool
}

// CreateSRQ sizes and links the SRQ's WQEs and fills CREATE_SRQ's driver
// data, as mlx5_create_srq: it asks the kernel for all the WQEs, the wait
// queue's included, less one.
func (c *context) CreateSRQ(init *provider.SRQInit, req []byte) (provider.Pending[provider.RQ], error) {
	if init.CQ != nil {
		return nil, fmt.Errorf("mlx5: XRC SRQ: %w", provider.ErrUnsupported)
	}
	if int64(init.MaxWR) > int64(c.maxSRQRecvWR) {
		return nil, fmt.Errorf("mlx5: SRQ of %d WRs, the device takes %d: %w", init.MaxWR, c.maxSRQRecvWR, provider.ErrInvalid)
	}
	if maxSGE := c.maxRQDescSz / segSize; int(init.MaxSGE) > maxSGE {
		return nil, fmt.Errorf("mlx5: SRQ of %d SGEs, the device takes %d: %w", init.MaxSGE, maxSGE, provider.ErrInvalid)
	}
	s := &srq{ctx: c, maxGS: int(init.MaxSGE)}
	if err := s.allocBuf(int64(init.MaxWR)); err != nil {
		return nil, err
	}
	var err error
	if s.db, err = c.dbr.alloc(); err != nil {
		s.free()
		return nil, err
	}
	putBE32(s.db.b, 0, 0)
	cmd := abi.MLX5CreateSRQ{
		BufAddr: mem.Addr(s.buf),
		DBAddr:  s.db.addr(),
	}
	if err := encode(req, &cmd, "CREATE_SRQ"); err != nil {
		s.free()
		return nil, err
	}
	init.MaxSGE = uint32(s.maxGS)
	init.MaxWR = uint32(s.max - 1)
	return &pendingSRQ{s: s, init: init}, nil
}

// allocBuf sizes, allocates and links the WQEs (mlx5_alloc_srq_buf).
func (s *srq) allocBuf(orig int64) error {
	c := s.ctx
	maxWR := orig*2 + 1
	haveWQ := true
	if maxWR > int64(c.maxSRQRecvWR) {
		maxWR = orig + 1
		haveWQ = false
	}
	size := segSize + s.maxGS*segSize
	size = max(32, size)
	size = int(roundupPow2(uint64(size)))
	// libmlx5 compares the WQE size with the largest receive queue here.
	if size > c.maxRecvWR {
		return fmt.Errorf("mlx5: SRQ WQE of %d bytes: %w", size, provider.ErrInvalid)
	}
	s.maxGS = (size - segSize) / segSize
	s.wqeShift = ilog32(uint32(size - 1))
	s.max = int(roundupPow2(uint64(maxWR)))
	var err error
	if s.buf, err = mem.Alloc(s.max * size); err != nil {
		return fmt.Errorf("mlx5: SRQ buffer: %w", err)
	}
	s.head = 0
	s.tail = int(roundupPow2(uint64(orig+1))) - 1
	s.initTail = s.tail
	if haveWQ {
		s.waitqHead = s.tail + 1
		s.waitqTail = s.max - 1
	} else {
		s.waitqHead, s.waitqTail = -1, -1
	}
	s.wrid = make([]uint64, s.max)
	s.link(s.head, s.tail)
	if haveWQ {
		s.link(s.waitqHead, s.waitqTail)
	}
	return nil
}

// link makes each WQE from start to end-1 point at the next (set_srq_buf_ll).
func (s *srq) link(start, end int) {
	for i := start; i < end; i++ {
		s.next(i).nextWQEIndex.set(uint16(i + 1))
	}
}

func (s *srq) next(i int) *srqNextSeg { return mem.At[srqNextSeg](s.buf, i<<s.wqeShift) }

type pendingSRQ struct {
	s    *srq
	init *provider.SRQInit
}

// Finish records the SRQ number, which version 0 CQEs name the SRQ by, and
// reports the WRs the application may post: the WQEs before the wait
// queue, less the one the list keeps.
func (p *pendingSRQ) Finish(resp []byte) (provider.RQ, error) {
	var r abi.MLX5CreateSRQResp
	decode(resp, &r)
	s, c := p.s, p.s.ctx
	p.init.MaxWR = uint32(s.initTail)
	c.tabMu.Lock()
	c.srqs.store(r.SRQN, s)
	c.tabMu.Unlock()
	s.inTable = true
	s.srqn = r.SRQN
	return s, nil
}

func (p *pendingSRQ) Abort() { p.s.free() }

func (s *srq) free() {
	c := s.ctx
	if s.inTable {
		c.tabMu.Lock()
		c.srqs.clear(s.srqn)
		c.tabMu.Unlock()
		s.inTable = false
	}
	c.freeMem(s.db, s.buf)
	s.db = dbrec{}
	s.buf = nil
}

// Close frees the SRQ after the kernel's is gone (mlx5_destroy_srq).
func (s *srq) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.free()
	return nil
}

// The SRQ's errors, made once: Put allocates nothing.
var (
	errSRQFull   = fmt.Errorf("mlx5: SRQ full: %w", provider.ErrFull)
	errSRQSGEs   = fmt.Errorf("mlx5: more SGEs than the SRQ takes: %w", provider.ErrInvalid)
	errSRQClosed = fmt.Errorf("mlx5: SRQ: %w", provider.ErrClosed)
)

// Put writes a receive WQE at the head of the free list: a data segment
// per SGE, zero-length ones included, and the invalid lkey after them if
// there is room (mlx5_post_srq_recv).
func (s *srq) Put(wr *provider.RecvWR) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errSRQClosed
	}
	if len(wr.SGE) > s.maxGS {
		return errSRQSGEs
	}
	if s.head == s.tail {
		return errSRQFull
	}
	s.write(wr)
	return nil
}

// write writes wr as the WQE at the head of the free list, which Put and
// Post checked, and counts it pending. Hold s.mu.
func (s *srq) write(wr *provider.RecvWR) {
	s.wrid[s.head] = wr.ID
	base := s.head << s.wqeShift
	s.head = int(s.next(s.head).nextWQEIndex.get())
	scat := base + segSize
	i := 0
	for ; i < len(wr.SGE); i++ {
		sg := &wr.SGE[i]
		setDataSeg(s.buf, scat+i*segSize, sg.Length, sg.LKey, sg.Addr)
	}
	if i < s.maxGS {
		setDataSeg(s.buf, scat+i*segSize, 0, invalidLKey, 0)
	}
	s.pending++
}

// Post puts wrs in order, each of at most maxSGE SGEs, and hands the
// ones it put to the device: Put for each and one Flush under one hold of
// the lock, which is what uverbs' PostRecv on an SRQ does with it
// (mlx5_post_srq_recv also locks once). It returns how many it put and
// the refusal of the next one. A request of more than maxSGE SGEs is
// refused as one of more than the SRQ takes (uverbs formats its own
// error).
//
//go:nosplit
func (s *srq) Post(wrs []provider.RecvWR, maxSGE int) (int, error) {
	// No stack check (nosplit): docs/architecture.md, The data path.
	lim := min(maxSGE, s.maxGS)
	s.mu.Lock()
	n := 0
	var err error
	for ; n < len(wrs); n++ {
		switch wr := &wrs[n]; {
		case s.closed:
			err = errSRQClosed
		case len(wr.SGE) > lim:
			err = errSRQSGEs
		case s.head == s.tail:
			err = errSRQFull
		default:
			s.write(wr)
			continue
		}
		break
	}
	s.flushLocked()
	s.mu.Unlock()
	return n, err
}

// Flush hands the WQEs Put since the last Flush to the device: the count
// of WQEs ever posted, in the doorbell record, after the WQEs.
func (s *srq) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushLocked()
	return nil
}

// flushLocked is Flush under s.mu.
func (s *srq) flushLocked() {
	if s.pending == 0 {
		return
	}
	s.counter += s.pending
	s.pending = 0
	mmio.ToDevice()
	putBE32(s.db.b, 0, uint32(s.counter))
}

// takeWRID returns the wr_id of the WQE a completion consumed and puts
// the WQE back on the free list.
func (s *srq) takeWRID(ind int) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.wrid[ind]
	s.freeLocked(ind)
	return id
}

// freeWQE puts a consumed WQE back at the tail of the free list
// (mlx5_free_srq_wqe).
func (s *srq) freeWQE(ind int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.freeLocked(ind)
}

func (s *srq) freeLocked(ind int) {
	if ind < 0 || ind >= s.max {
		return
	}
	s.next(s.tail).nextWQEIndex.set(uint16(ind))
	s.tail = ind
}

// completeODPFault posts a WQE the device could not scatter into (its
// pages were not present) again, after a turn in the wait queue
// (mlx5_complete_odp_fault).
func (s *srq) completeODPFault(ind int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.cooldown(ind) {
		s.next(s.tail).nextWQEIndex.set(uint16(ind))
		s.tail = ind
	}
	s.repost(ind)
}

// cooldown puts ind at the end of the wait queue and the wait queue's
// first WQE at the tail of the free list (srq_cooldown_wqe).
func (s *srq) cooldown(ind int) bool {
	if s.waitqHead < 0 {
		return false
	}
	s.next(s.waitqTail).nextWQEIndex.set(uint16(ind))
	s.waitqTail = ind
	s.next(s.tail).nextWQEIndex.set(uint16(s.waitqHead))
	s.tail = s.waitqHead
	s.waitqHead = int(s.next(s.waitqHead).nextWQEIndex.get())
	return true
}

// repost copies WQE ind's scatter list to the head of the free list and
// hands it to the device at once (srq_repost).
func (s *srq) repost(ind int) {
	s.wrid[s.head] = s.wrid[ind]
	src := ind<<s.wqeShift + segSize
	dst := s.head<<s.wqeShift + segSize
	for i := 0; i < s.maxGS; i++ {
		copy(s.buf[dst+i*segSize:dst+(i+1)*segSize], s.buf[src+i*segSize:src+(i+1)*segSize])
		if mem.At[dataSeg](s.buf, dst+i*segSize).lkey.get() == invalidLKey {
			break
		}
	}
	s.head = int(s.next(s.head).nextWQEIndex.get())
	s.counter++
	mmio.ToDevice()
	putBE32(s.db.b, 0, uint32(s.counter))
}

// copyToRecv scatters a receive payload the device put in the CQE into
// the WQE's buffers (mlx5_copy_to_recv_srq). Like libmlx5 it counts the
// WQE's entries from after its next segment, so a payload longer than the
// WQE's buffers would take the next WQE's next segment for one; it stops
// only at the end of the SRQ.
func (s *srq) copyToRecv(ind int, data []byte, size int) uint32 {
	n := 1 << (s.wqeShift - 4)
	scat := ind<<s.wqeShift + segSize
	for i := 0; i < n; i++ {
		if scat+segSize > len(s.buf) {
			break
		}
		d := mem.At[dataSeg](s.buf, scat)
		cp := min(size, int(d.byteCount.get()))
		if cp > len(data) {
			break
		}
		copy(mem.User(d.addr.get(), cp), data[:cp])
		size -= cp
		if size <= 0 {
			return abi.IB_WC_SUCCESS
		}
		data = data[cp:]
		scat += segSize
	}
	return abi.IB_WC_LOC_LEN_ERR
}

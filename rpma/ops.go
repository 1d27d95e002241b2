package rpma

import (
	"math"

	"github.com/purerdma/purerdma/uverbs"
)

// CompletionFlags say when an operation reports a completion
// (RPMA_F_COMPLETION_*).
type CompletionFlags int

// Completion flags. Every operation reports a failure; with
// CompletionAlways it reports success too.
const (
	CompletionOnError CompletionFlags = 1 << 0
	CompletionAlways  CompletionFlags = 1<<1 | CompletionOnError
)

// AtomicWriteAlignment is the alignment AtomicWrite needs of its
// destination offset (RPMA_ATOMIC_WRITE_ALIGNMENT).
const AtomicWriteAlignment = 8

// FlushType is what a flush guarantees (enum rpma_flush_type).
type FlushType int

// Flush types.
const (
	FlushPersistent FlushType = 0 // the data is persistent
	FlushVisibility FlushType = 1 // the data is visible to the peer's CPU
)

func sendFlags(f CompletionFlags) (uverbs.SendFlags, error) {
	switch f {
	case CompletionOnError:
		return 0, nil
	case CompletionAlways:
		return uverbs.SendSignaled, nil
	}
	return 0, inval("completion flags %#x", int(f))
}

// post posts one send-queue request with the data sge, or none when
// sge.Length is 0 and it has no address (a zero-byte operation). The
// request and its SGE stay on this stack: posting allocates nothing.
func (c *Conn) post(wr uverbs.SendWR, sge uverbs.SGE) error {
	var s [1]uverbs.SGE
	var w [1]uverbs.SendWR
	s[0], w[0] = sge, wr
	if sge != (uverbs.SGE{}) {
		w[0].SGE = s[:]
	}
	_, err := c.id.QP().PostSend(w[:])
	return provider("post", err)
}

// sgeOf returns the SGE for n bytes at off of m; a nil m with 0 and 0 is
// a zero-byte operation, as librpma allows, and gives the zero SGE.
func sgeOf(m *MR, off, n int) (uverbs.SGE, error) {
	if m == nil {
		if off != 0 || n != 0 {
			return uverbs.SGE{}, inval("%d bytes at %d without a region", n, off)
		}
		return uverbs.SGE{}, nil
	}
	return m.sge(off, n)
}

// rdma builds an RDMA read or write between local and remote memory.
func (c *Conn) rdma(op uverbs.WROpcode, local *MR, loff int, remote *RemoteMR, roff, n int, flags CompletionFlags, opCtx uint64) (uverbs.SendWR, uverbs.SGE, error) {
	f, err := sendFlags(flags)
	if err != nil {
		return uverbs.SendWR{}, uverbs.SGE{}, err
	}
	if (local == nil) != (remote == nil) {
		return uverbs.SendWR{}, uverbs.SGE{}, inval("a zero-byte operation takes neither region")
	}
	if remote == nil && roff != 0 {
		return uverbs.SendWR{}, uverbs.SGE{}, inval("remote offset %d without a region", roff)
	}
	wr := uverbs.SendWR{ID: opCtx, Opcode: op, Flags: f}
	sge, err := sgeOf(local, loff, n)
	if err != nil {
		return wr, sge, err
	}
	if remote != nil {
		if wr.RemoteAddr, err = remote.at(roff, n); err != nil {
			return wr, sge, err
		}
		wr.RKey = remote.rkey
	}
	return wr, sge, nil
}

// Read reads n bytes at soff of the peer's src into doff of dst
// (rpma_read).
func (c *Conn) Read(dst *MR, doff int, src *RemoteMR, soff, n int, flags CompletionFlags, opCtx uint64) error {
	if c == nil {
		return ErrInval
	}
	wr, sge, err := c.rdma(uverbs.WRRDMARead, dst, doff, src, soff, n, flags, opCtx)
	if err != nil {
		return err
	}
	return c.post(wr, sge)
}

// Write writes n bytes at soff of src to doff of the peer's dst
// (rpma_write).
func (c *Conn) Write(dst *RemoteMR, doff int, src *MR, soff, n int, flags CompletionFlags, opCtx uint64) error {
	if c == nil {
		return ErrInval
	}
	wr, sge, err := c.rdma(uverbs.WRRDMAWrite, src, soff, dst, doff, n, flags, opCtx)
	if err != nil {
		return err
	}
	return c.post(wr, sge)
}

// WriteWithImm writes like Write and delivers imm to a receive of the
// peer, whose completion has opcode RECV_RDMA_WITH_IMM
// (rpma_write_with_imm). imm is in host order here and in cq.WC.
func (c *Conn) WriteWithImm(dst *RemoteMR, doff int, src *MR, soff, n int, flags CompletionFlags, imm uint32, opCtx uint64) error {
	if c == nil {
		return ErrInval
	}
	wr, sge, err := c.rdma(uverbs.WRRDMAWriteWithImm, src, soff, dst, doff, n, flags, opCtx)
	if err != nil {
		return err
	}
	wr.Imm = imm
	return c.post(wr, sge)
}

// AtomicWrite writes 8 bytes to an 8-byte aligned offset of the peer's
// dst so that the peer never sees a partial value (rpma_atomic_write).
// Like librpma 1.2 and 1.3, it is a native RDMA ATOMIC WRITE when the
// device has it (Peer.NativeAtomicWrite; completion opcode
// cq.OpAtomicWrite), which the responder performs after every earlier
// operation; otherwise an inline RDMA write fenced behind earlier reads
// (and so behind an emulated Flush), completing as cq.OpRDMAWrite.
func (c *Conn) AtomicWrite(dst *RemoteMR, doff int, src [8]byte, flags CompletionFlags, opCtx uint64) error {
	if c == nil {
		return ErrInval
	}
	f, err := sendFlags(flags)
	if err != nil {
		return err
	}
	if dst == nil || doff%AtomicWriteAlignment != 0 {
		return inval("atomic write to offset %d", doff)
	}
	raddr, err := dst.at(doff, 8)
	if err != nil {
		return err
	}
	if c.peer.nativeAtomicWrite {
		// The 8 bytes travel in the request; no scratch page.
		return c.post(uverbs.SendWR{
			ID: opCtx, Opcode: uverbs.WRAtomicWrite, Flags: f,
			RemoteAddr: raddr, RKey: dst.rkey, AtomicData: src,
		}, uverbs.SGE{})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed { // Close unmapped the scratch page
		return closedErr("atomic write", ErrInval)
	}
	// Inline data is copied at post time; the scratch page holds it until
	// then.
	copy(c.raw[8:16], src[:])
	return c.post(uverbs.SendWR{
		ID: opCtx, Opcode: uverbs.WRRDMAWrite, Flags: f | uverbs.SendInline | uverbs.SendFence,
		RemoteAddr: raddr, RKey: dst.rkey,
	}, uverbs.SGE{Addr: c.rawMR.Addr() + 8, Length: 8})
}

// Flush makes earlier writes to the peer's dst persistent or visible
// (rpma_flush). It needs the region registered with the matching flush
// usage; FlushPersistent also needs the peer's DirectWriteToPMem
// (ApplyRemotePeerConfig). Otherwise it returns ErrNoSupp. Like librpma
// 1.3, it is a native RDMA FLUSH of n bytes at doff when the peer flushes
// natively (Peer.NativeFlush; completion opcode cq.OpFlush), which needs
// the peer's region registered with the FLUSH access flags (a C librpma
// 1.2 peer's are not: see FlushEmulated). Otherwise, like librpma 1.2, it
// is an 8-byte RDMA read of the region, which completes (as
// cq.OpRDMARead) only after the writes before it; n is then not used on
// the wire.
func (c *Conn) Flush(dst *RemoteMR, doff, n int, typ FlushType, flags CompletionFlags, opCtx uint64) error {
	if c == nil {
		return ErrInval
	}
	f, err := sendFlags(flags)
	if err != nil {
		return err
	}
	if dst == nil {
		return inval("flush without a region")
	}
	c.mu.Lock()
	direct := c.directWrite
	c.mu.Unlock()
	var native uverbs.FlushType
	switch typ {
	case FlushPersistent:
		if !direct || dst.usage&UsageFlushTypePersistent == 0 {
			return ErrNoSupp
		}
		native = uverbs.FlushPersistent
	case FlushVisibility:
		if dst.usage&UsageFlushTypeVisibility == 0 {
			return ErrNoSupp
		}
		native = uverbs.FlushGlobal
	default:
		return inval("flush type %d", typ)
	}
	raddr, err := dst.at(doff, n)
	if err != nil {
		return err
	}
	if c.peer.nativeFlush {
		if uint64(n) > math.MaxUint32 {
			// The WQE's length is 32 bits (rdma-core truncates).
			return inval("native flush of %d bytes", n)
		}
		return c.post(uverbs.SendWR{
			ID: opCtx, Opcode: uverbs.WRFlush, Flags: f,
			RemoteAddr: raddr, RKey: dst.rkey, Length: uint32(n),
			FlushType: native, FlushLevel: uverbs.FlushRange,
		}, uverbs.SGE{})
	}
	return c.post(uverbs.SendWR{
		ID: opCtx, Opcode: uverbs.WRRDMARead, Flags: f,
		RemoteAddr: raddr, RKey: dst.rkey,
	}, uverbs.SGE{Addr: c.rawMR.Addr(), Length: 8, LKey: c.rawMR.LKey()})
}

// Send sends n bytes at off of src to a receive of the peer (rpma_send).
func (c *Conn) Send(src *MR, off, n int, flags CompletionFlags, opCtx uint64) error {
	if c == nil {
		return ErrInval
	}
	return c.send(uverbs.WRSend, src, off, n, flags, 0, opCtx)
}

// SendWithImm sends like Send with immediate data imm, in host order
// (rpma_send_with_imm).
func (c *Conn) SendWithImm(src *MR, off, n int, flags CompletionFlags, imm uint32, opCtx uint64) error {
	if c == nil {
		return ErrInval
	}
	return c.send(uverbs.WRSendWithImm, src, off, n, flags, imm, opCtx)
}

func (c *Conn) send(op uverbs.WROpcode, src *MR, off, n int, flags CompletionFlags, imm uint32, opCtx uint64) error {
	f, err := sendFlags(flags)
	if err != nil {
		return err
	}
	sge, err := sgeOf(src, off, n)
	if err != nil {
		return err
	}
	return c.post(uverbs.SendWR{ID: opCtx, Opcode: op, Flags: f, Imm: imm}, sge)
}

// Recv posts a buffer for a message from the peer (rpma_recv). Posted
// buffers form an unordered set: a message may land in any of them.
// opCtx comes back as the completion's ID.
func (c *Conn) Recv(dst *MR, off, n int, opCtx uint64) error {
	if c == nil {
		return ErrInval
	}
	if c.req.cfg.SRQ != nil {
		return inval("the connection receives through its SRQ")
	}
	return postRecv(c.id.QP(), dst, off, n, opCtx)
}

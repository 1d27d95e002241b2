package rpma

import (
	"errors"
	"fmt"
	"math"

	"github.com/purerdma/purerdma/uverbs"
)

// CompletionFlags say when an operation reports a completion
// (RPMA_F_COMPLETION_*). The zero value, which librpma rejects, means
// CompletionAlways here, so that the zero Op reports its completion.
type CompletionFlags int

// Completion flags. Every operation reports a failure; with
// CompletionAlways (or 0) it reports success too, and with
// CompletionOnError only a failure.
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
	// librpma rejects only 0, which means CompletionAlways here; Go
	// rejects the values that are neither flag, which C would post as
	// one or the other.
	switch f {
	case CompletionOnError:
		return 0, nil
	case 0, CompletionAlways:
		return uverbs.SendSignaled, nil
	}
	return 0, inval("completion flags %#x", int(f))
}

// Op is how an operation reports its completion: librpma's flags and
// op_context arguments, passed by value so that posting allocates
// nothing.
//
// The zero Op posts an operation that reports its completion, success
// or failure, with the ID 0: Flags 0 means CompletionAlways, the flags
// librpma's examples pass (in C, flags 0 is RPMA_E_INVAL). Set Flags to
// CompletionOnError to hear of the operation only when it fails, and
// Context to tell completions apart.
type Op struct {
	// Flags say when the operation reports a completion. 0 means
	// CompletionAlways.
	Flags CompletionFlags
	// Context comes back as the completion's cq.WC.ID (librpma's
	// op_context). 0 is a valid ID.
	Context uint64
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
	if err != nil {
		return c.postErr(err)
	}
	return nil
}

// postErr says why a send queue is full, the one refusal users meet
// without a mistake in their arguments: an operation holds its slot until
// the device has finished it and, on hardware such as mlx5, until a
// signaled operation after it has completed and that completion has been
// collected (GetCompletion, GetWC), so a run of unsignaled operations
// fills the queue. rxe and siw free slots as they finish requests.
func (c *Conn) postErr(err error) error {
	if errors.Is(err, uverbs.ErrQueueFull) {
		return provider(fmt.Sprintf("post: send queue full (SQSize %d): every slot holds an operation in flight; "+
			"an unsignaled one (CompletionOnError) is released only by the completion of a later signaled one, once collected",
			c.req.cfg.SQSize), err)
	}
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
func (c *Conn) rdma(opc uverbs.WROpcode, local *MR, loff int, remote *RemoteMR, roff, n int, op Op) (uverbs.SendWR, uverbs.SGE, error) {
	f, err := sendFlags(op.Flags)
	if err != nil {
		return uverbs.SendWR{}, uverbs.SGE{}, err
	}
	if (local == nil) != (remote == nil) {
		return uverbs.SendWR{}, uverbs.SGE{}, inval("a zero-byte operation takes neither region")
	}
	if remote == nil && roff != 0 {
		return uverbs.SendWR{}, uverbs.SGE{}, inval("remote offset %d without a region", roff)
	}
	wr := uverbs.SendWR{ID: op.Context, Opcode: opc, Flags: f}
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

// usable returns the error of an operation on a nil or closed
// connection: the check that comes before the arguments', as a NULL
// connection comes first in librpma.
func (c *Conn) usable(what string) error {
	if c == nil {
		return errNil
	}
	if c.closed.Load() {
		return closedErr(what, nil)
	}
	return nil
}

// Read reads n bytes at srcOff of the peer's src into dstOff of dst
// (rpma_read). A zero-byte read takes nil regions and offsets 0.
func (c *Conn) Read(dst *MR, dstOff int, src *RemoteMR, srcOff, n int, op Op) error {
	if err := c.usable("read"); err != nil {
		return err
	}
	wr, sge, err := c.rdma(uverbs.WRRDMARead, dst, dstOff, src, srcOff, n, op)
	if err != nil {
		return err
	}
	return c.post(wr, sge)
}

// Write writes n bytes at srcOff of src to dstOff of the peer's dst
// (rpma_write). A zero-byte write takes nil regions and offsets 0.
func (c *Conn) Write(dst *RemoteMR, dstOff int, src *MR, srcOff, n int, op Op) error {
	if err := c.usable("write"); err != nil {
		return err
	}
	wr, sge, err := c.rdma(uverbs.WRRDMAWrite, src, srcOff, dst, dstOff, n, op)
	if err != nil {
		return err
	}
	return c.post(wr, sge)
}

// WriteWithImm writes like Write and delivers imm to a receive of the
// peer, whose completion has opcode RECV_RDMA_WITH_IMM
// (rpma_write_with_imm). imm is in host order here and in cq.WC.
func (c *Conn) WriteWithImm(dst *RemoteMR, dstOff int, src *MR, srcOff, n int, imm uint32, op Op) error {
	if err := c.usable("write with immediate"); err != nil {
		return err
	}
	wr, sge, err := c.rdma(uverbs.WRRDMAWriteWithImm, src, srcOff, dst, dstOff, n, op)
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
func (c *Conn) AtomicWrite(dst *RemoteMR, dstOff int, src [8]byte, op Op) error {
	if err := c.usable("atomic write"); err != nil {
		return err
	}
	f, err := sendFlags(op.Flags)
	if err != nil {
		return err
	}
	if dst == nil || dstOff%AtomicWriteAlignment != 0 {
		return inval("atomic write to offset %d", dstOff)
	}
	raddr, err := dst.at(dstOff, 8)
	if err != nil {
		return err
	}
	if c.peer.nativeAtomicWrite {
		// The 8 bytes travel in the request; no scratch page.
		return c.post(uverbs.SendWR{
			ID: op.Context, Opcode: uverbs.WRAtomicWrite, Flags: f,
			RemoteAddr: raddr, RKey: dst.rkey, AtomicData: src,
		}, uverbs.SGE{})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() { // Close unmapped the scratch page
		return closedErr("atomic write", nil)
	}
	// Inline data is copied at post time; the scratch page holds it until
	// then.
	copy(c.raw[8:16], src[:])
	return c.post(uverbs.SendWR{
		ID: op.Context, Opcode: uverbs.WRRDMAWrite, Flags: f | uverbs.SendInline | uverbs.SendFence,
		RemoteAddr: raddr, RKey: dst.rkey,
	}, uverbs.SGE{Addr: c.rawMR.Addr() + 8, Length: 8})
}

// Flush makes earlier writes to the peer's dst persistent or visible
// (rpma_flush). It needs the region registered with the matching flush
// usage; FlushPersistent also needs the peer's DirectWriteToPMem
// (ApplyRemotePeerConfig). Otherwise it returns ErrUnsupported. Like
// librpma 1.3, it is a native RDMA FLUSH of n bytes at dstOff when the
// peer flushes natively (Peer.NativeFlush; completion opcode cq.OpFlush),
// which needs the peer's region registered with the FLUSH access flags (a
// C librpma 1.2 peer's are not: see FlushEmulated). Otherwise, like
// librpma 1.2, it is an 8-byte RDMA read of the region, which completes
// (as cq.OpRDMARead) only after the writes before it; n is then not used
// on the wire.
func (c *Conn) Flush(dst *RemoteMR, dstOff, n int, typ FlushType, op Op) error {
	if err := c.usable("flush"); err != nil {
		return err
	}
	f, err := sendFlags(op.Flags)
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
		if !direct {
			return errNoPersistentFlush
		}
		if dst.usage&UsageFlushTypePersistent == 0 {
			return errNoPersistentUsage
		}
		native = uverbs.FlushPersistent
	case FlushVisibility:
		if dst.usage&UsageFlushTypeVisibility == 0 {
			return errNoVisibilityUsage
		}
		native = uverbs.FlushGlobal
	default:
		return inval("flush type %d", typ)
	}
	raddr, err := dst.at(dstOff, n)
	if err != nil {
		return err
	}
	if c.peer.nativeFlush {
		if uint64(n) > math.MaxUint32 {
			// The WQE's length is 32 bits (rdma-core truncates).
			return inval("native flush of %d bytes", n)
		}
		return c.post(uverbs.SendWR{
			ID: op.Context, Opcode: uverbs.WRFlush, Flags: f,
			RemoteAddr: raddr, RKey: dst.rkey, Length: uint32(n),
			FlushType: native, FlushLevel: uverbs.FlushRange,
		}, uverbs.SGE{})
	}
	return c.post(uverbs.SendWR{
		ID: op.Context, Opcode: uverbs.WRRDMARead, Flags: f,
		RemoteAddr: raddr, RKey: dst.rkey,
	}, uverbs.SGE{Addr: c.rawMR.Addr(), Length: 8, LKey: c.rawMR.LKey()})
}

// Flush's ErrUnsupported, made once: a data-path call that fails should
// not allocate either.
var (
	errNoPersistentFlush = unsupported("persistent flush without the peer's DirectWriteToPMem")
	errNoPersistentUsage = unsupported("persistent flush of a region without UsageFlushTypePersistent")
	errNoVisibilityUsage = unsupported("visibility flush of a region without UsageFlushTypeVisibility")
)

// Send sends n bytes at off of src to a receive of the peer (rpma_send).
// A zero-byte send takes a nil src and offset 0.
func (c *Conn) Send(src *MR, off, n int, op Op) error {
	if err := c.usable("send"); err != nil {
		return err
	}
	return c.send(uverbs.WRSend, src, off, n, 0, op)
}

// SendWithImm sends like Send with immediate data imm, in host order
// (rpma_send_with_imm).
func (c *Conn) SendWithImm(src *MR, off, n int, imm uint32, op Op) error {
	if err := c.usable("send with immediate"); err != nil {
		return err
	}
	return c.send(uverbs.WRSendWithImm, src, off, n, imm, op)
}

func (c *Conn) send(opc uverbs.WROpcode, src *MR, off, n int, imm uint32, op Op) error {
	f, err := sendFlags(op.Flags)
	if err != nil {
		return err
	}
	sge, err := sgeOf(src, off, n)
	if err != nil {
		return err
	}
	return c.post(uverbs.SendWR{ID: op.Context, Opcode: opc, Flags: f, Imm: imm}, sge)
}

// Recv posts a buffer for a message from the peer (rpma_recv). Posted
// buffers form an unordered set: a message may land in any of them.
// opCtx comes back as the completion's cq.WC.ID. A zero-length receive
// takes a nil dst and offset 0.
func (c *Conn) Recv(dst *MR, off, n int, opCtx uint64) error {
	if err := c.usable("recv"); err != nil {
		return err
	}
	if c.req.cfg.SRQ != nil {
		return inval("the connection receives through its SRQ")
	}
	return postRecv(c.id.QP(), dst, off, n, opCtx)
}

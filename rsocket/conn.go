package rsocket

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// Conn is an rsocket stream connection. It implements net.Conn; Read and
// Write may run concurrently with each other and with Close.
type Conn struct {
	id   *rdmacm.ID
	ch   *rdmacm.EventChannel // the ID's own channel: its CM events
	cqch *cq.Channel
	cq   *cq.CQ
	qp   *uverbs.QP

	local, remote Addr
	network       string

	// Memory the device reads and writes: outside the Go heap, freed
	// after the QP and the regions are gone.
	sbuf, rbuf, tbuf []byte
	smr, rmr, tmr    *mr.MR

	holdTimer *time.Timer // ends holdSend (passive) or sends the kick (active), on iWARP
	holdUntil time.Time   // when holdSend ends at the latest: Close's disconnect waits for it
	peerOrder binary.ByteOrder
	inline    int

	rlock sync.Mutex // one Read at a time (rs->rlock)
	wlock sync.Mutex // one Write at a time (rs->slock)

	// mu guards the protocol state (stream), the CQ (rs->cq_lock) and
	// the scratch work requests below.
	mu sync.Mutex
	stream
	msgIdx int // the message-mode receive posted next
	wc     []cq.WC
	swr    [2]uverbs.SendWR
	ssge   [2]uverbs.SGE
	rwr    [1]uverbs.RecvWR
	rsge   [1]uverbs.SGE

	readSig  chan struct{} // a Read may make progress now
	writeSig chan struct{} // a Write (or Close's drain) may
	closed   chan struct{}
	once     sync.Once
	closeErr error
	stop     context.CancelFunc
	done     sync.WaitGroup

	rdl, wdl deadline
	ka       *time.Timer
	kaEvery  time.Duration

	// The user timeout (Options.UserTimeout): the check sees whether the
	// stream's sendComps moved while sends were outstanding.
	ut      *time.Timer
	utLimit time.Duration
	utTick  time.Duration
	utIdle  time.Duration
	utSeen  uint64
}

// newConn makes the local half of a connection on id, which is bound to a
// device (resolved, or a connection request): CQ, QP, buffers, receives.
func newConn(id *rdmacm.ID, ch *rdmacm.EventChannel, o *Options) (c *Conn, err error) {
	c = &Conn{id: id, ch: ch, network: "rdma",
		readSig: make(chan struct{}, 1), writeSig: make(chan struct{}, 1), closed: make(chan struct{})}
	c.rdl.init()
	c.wdl.init()
	// The error returns below set c to nil: release what was built
	// through a copy.
	built := c
	defer func() {
		if err != nil {
			built.release()
		}
	}()
	vctx := id.Context()
	if vctx == nil {
		return nil, fmt.Errorf("rsocket: ID not bound to a device: %w", uverbs.ErrInvalid)
	}
	attr, err := vctx.QueryDevice()
	if err != nil {
		return nil, err
	}
	maxQP := min(attr.MaxQPWR, qpMaxSize)
	clamp := func(v int) int { return max(min(v, maxQP), qpMinSize) }
	c.stream = newStream(clamp(o.sendQueue()), clamp(o.recvQueue()), o.sendBuffer(), o.recvBuffer(),
		vctx.Device().NodeType == uverbs.NodeRNIC)

	if c.cqch, err = cq.NewChannel(vctx); err != nil {
		return nil, err
	}
	if c.cq, err = cq.New(vctx, c.sqSize+c.rqSize, &cq.Options{Channel: c.cqch}); err != nil {
		return nil, err
	}
	err = id.CreateQP(nil, uverbs.QPInit{Type: uverbs.RC, SendCQ: c.cq, RecvCQ: c.cq, SigAll: true,
		Cap: uverbs.QPCap{MaxSendWR: c.sqSize, MaxRecvWR: c.rqSize, MaxSendSGE: 2, MaxRecvSGE: 1, MaxInlineData: o.inline()}})
	if err != nil {
		return nil, err
	}
	c.qp = id.QP()
	c.inline = min(c.qp.Cap().MaxInlineData, o.inline())
	if c.msgMode && c.qp.Cap().MaxInlineData < msgSize {
		return nil, fmt.Errorf("rsocket: message mode needs %d bytes of inline data, the QP has %d: %w",
			msgSize, c.qp.Cap().MaxInlineData, syscall.ENOTSUP)
	}
	pd := id.PD()
	// sbuf: the data ring, a slot per control message in flight (the SGE
	// of a credit update), and the scratch word message mode sends inline.
	if c.sbuf, err = mr.Alloc(c.sbufSize + sgeSize*qpCtrlSize + msgSize); err != nil {
		return nil, err
	}
	if c.smr, err = mr.Register(pd, c.sbuf, uverbs.LocalWrite); err != nil {
		return nil, err
	}
	rlen := c.rbufSize
	if c.msgMode {
		rlen += c.rqSize * msgSize
	}
	if c.rbuf, err = mr.Alloc(rlen); err != nil {
		return nil, err
	}
	if c.rmr, err = mr.Register(pd, c.rbuf, uverbs.LocalWrite|uverbs.RemoteWrite); err != nil {
		return nil, err
	}
	if c.tbuf, err = mr.Alloc(sgeSize * sglSize); err != nil {
		return nil, err
	}
	if c.tmr, err = mr.Register(pd, c.tbuf, uverbs.LocalWrite|uverbs.RemoteWrite); err != nil {
		return nil, err
	}
	c.wc = make([]cq.WC, 32)
	c.kaEvery = o.keepAlive()
	c.utLimit, c.utTick = o.userTimeout()
	for range c.rqSize {
		if err := c.postRecv(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// connData is what this side announces (rs_format_conn_data).
func (c *Conn) connData() []byte {
	d := connData{Version: 1, Flags: connFlagIOMap, Credits: uint16(c.rqSize),
		TargetSGL: sge{Addr: c.tmr.Addr(), Key: c.tmr.RKey(), Length: sglSize},
		DataBuf:   sge{Addr: c.rmr.Addr(), Key: c.rmr.RKey(), Length: uint32(c.rbufSize / 2)}}
	if hostBig {
		d.Flags |= connFlagNet
	}
	b := make([]byte, connDataLen)
	d.marshal(b)
	return b
}

// peer takes in the peer's connection data (rs_save_conn_data) and starts
// the goroutines that follow the CQ and the CM.
func (c *Conn) start(d connData) {
	c.stream.start(d)
	c.peerOrder = binary.ByteOrder(binary.LittleEndian)
	if d.Flags&connFlagNet != 0 {
		c.peerOrder = binary.BigEndian
	}
	c.storeTarget(0, d.DataBuf) // the target SGL's entry 0
	if a, err := c.id.LocalAddr(); err == nil {
		c.local = Addr{a}
	}
	if a, err := c.id.RemoteAddr(); err == nil {
		c.remote = Addr{a}
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.stop = cancel
	c.done.Add(2)
	go c.pollLoop()
	go c.cmLoop(ctx)
	// The timers are made under mu, which their functions take before
	// they Reset them: one that fires before its field is set waits.
	c.mu.Lock()
	if c.kaEvery > 0 {
		c.ka = time.AfterFunc(c.kaEvery, c.keepalive)
	}
	if c.utLimit > 0 {
		c.ut = time.AfterFunc(c.utTick, c.checkProgress)
	}
	c.process()
	c.mu.Unlock()
}

// The target SGL: entries the peer writes with RDMA (each an rs_sge in
// our byte order) and this side consumes. Both sides touch it, so it is
// read and written with atomics.
func (c *Conn) targetWord64(i, off int) *uint64 {
	return (*uint64)(unsafe.Pointer(&c.tbuf[i*sgeSize+off]))
}
func (c *Conn) targetWord32(i, off int) *uint32 {
	return (*uint32)(unsafe.Pointer(&c.tbuf[i*sgeSize+off]))
}
func (c *Conn) targetLen(i int) uint32 { return atomic.LoadUint32(c.targetWord32(i, 12)) }
func (c *Conn) storeTarget(i int, s sge) {
	atomic.StoreUint64(c.targetWord64(i, 0), s.Addr)
	atomic.StoreUint32(c.targetWord32(i, 8), s.Key)
	atomic.StoreUint32(c.targetWord32(i, 12), s.Length)
}

func (c *Conn) postRecv() error {
	c.rwr[0] = uverbs.RecvWR{ID: wrRecv}
	if c.msgMode {
		c.rwr[0].ID = wrRecv | uint64(c.msgIdx)
		c.rsge[0] = uverbs.SGE{Addr: c.rmr.Addr() + uint64(c.rbufSize+c.msgIdx*msgSize), Length: msgSize, LKey: c.rmr.LKey()}
		c.rwr[0].SGE = c.rsge[:]
		if c.msgIdx++; c.msgIdx == c.rqSize {
			c.msgIdx = 0
		}
	}
	_, err := c.qp.PostRecv(c.rwr[:])
	return err
}

// postMsg sends a message with no data (rs_post_msg).
func (c *Conn) postMsg(m uint32) error {
	if !c.msgMode {
		c.swr[0] = uverbs.SendWR{ID: uint64(m), Opcode: uverbs.WRRDMAWriteWithImm, Imm: m}
		_, err := c.qp.PostSend(c.swr[:1])
		return err
	}
	return c.postMsgSend(uint64(m), m)
}

// postMsgSend sends m as 4 inline bytes, in this host's order as
// rsocket.c does (it sends its uint32 as it lies in memory).
func (c *Conn) postMsgSend(wrID uint64, m uint32) error {
	off := c.sbufSize + sgeSize*qpCtrlSize
	binary.NativeEndian.PutUint32(c.sbuf[off:], m)
	c.ssge[0] = uverbs.SGE{Addr: c.smr.Addr() + uint64(off), Length: msgSize, LKey: c.smr.LKey()}
	c.swr[0] = uverbs.SendWR{ID: wrID, Opcode: uverbs.WRSend, Flags: uverbs.SendInline, SGE: c.ssge[:1]}
	_, err := c.qp.PostSend(c.swr[:1])
	return err
}

// postWriteMsg writes sges to the peer and tells it with m
// (rs_post_write_msg): one write with immediate, or on iWARP a write and
// a send.
func (c *Conn) postWriteMsg(sges []uverbs.SGE, m uint32, flags uverbs.SendFlags, addr uint64, rkey uint32) error {
	if !c.msgMode {
		c.swr[0] = uverbs.SendWR{ID: uint64(m), Opcode: uverbs.WRRDMAWriteWithImm, Flags: flags, SGE: sges,
			Imm: m, RemoteAddr: addr, RKey: rkey}
		_, err := c.qp.PostSend(c.swr[:1])
		return err
	}
	c.swr[0] = uverbs.SendWR{ID: uint64(m), Opcode: uverbs.WRRDMAWrite, Flags: flags, SGE: sges,
		RemoteAddr: addr, RKey: rkey}
	if _, err := c.qp.PostSend(c.swr[:1]); err != nil {
		return err
	}
	return c.postMsgSend(uint64(msgSet(msgOp(m), 0))|wrMsgSend, m)
}

// sendCredits is rs_send_credits: announce the next free half of the
// receive buffer in the peer's target SGL, or only new sequence credits.
func (c *Conn) sendCredits() {
	cr := c.takeCredits()
	var err error
	if cr.announce {
		off := c.sbufSize + sgeSize*cr.slot
		putSGE(c.sbuf[off:], sge{Addr: c.rmr.Addr() + uint64(cr.bufOff), Key: c.rmr.RKey(), Length: uint32(c.rbufSize / 2)}, c.peerOrder)
		c.ssge[1] = uverbs.SGE{Addr: c.smr.Addr() + uint64(off), Length: sgeSize, LKey: c.smr.LKey()}
		var flags uverbs.SendFlags
		if c.inline >= sgeSize {
			flags = uverbs.SendInline
		}
		err = c.postWriteMsg(c.ssge[1:2], cr.msg, flags, c.remoteSGL.Addr+uint64(cr.remoteSGE*sgeSize), c.remoteSGL.Key)
	} else {
		err = c.postMsg(cr.msg)
	}
	if err != nil {
		c.fail(fmt.Errorf("rsocket: send credits: %w", err))
	}
}

// process polls the CQ and applies what it finds (rs_poll_cq), then gives
// credits. It wakes blocked Reads and Writes when anything changed.
func (c *Conn) process() int {
	total, rcnt := 0, 0
	for {
		if c.giveCredits() {
			c.sendCredits()
		}
		n, err := c.cq.Poll(c.wc)
		if err != nil {
			c.fail(fmt.Errorf("rsocket: poll: %w", err))
			break
		}
		if n == 0 {
			break
		}
		for i := range c.wc[:n] {
			if c.wc[i].ID&wrRecv != 0 {
				rcnt++
				c.recvDone(&c.wc[i])
			} else {
				c.sendDone(&c.wc[i])
			}
		}
		total += n
	}
	if c.state&stConnected != 0 {
		for ; rcnt > 0; rcnt-- {
			if err := c.postRecv(); err != nil {
				c.fail(fmt.Errorf("rsocket: post receive: %w", err))
				break
			}
		}
	}
	if c.giveCredits() {
		c.sendCredits()
	}
	if total > 0 {
		signal(c.readSig)
		signal(c.writeSig)
	}
	return total
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (c *Conn) recvDone(wc *cq.WC) {
	if wc.Status != cq.Success {
		if c.state&stConnected != 0 {
			c.fail(fmt.Errorf("rsocket: receive: %w: %w", syscall.ECONNRESET, &cq.CompletionError{ID: wc.ID, Status: wc.Status, VendorErr: wc.VendorErr}))
		}
		return
	}
	c.holdSend = false // the peer is up: it sent
	var m uint32
	if wc.Flags&cq.WithImm != 0 {
		m = wc.Imm
	} else {
		idx := int(uint32(wc.ID))
		if idx >= c.rqSize {
			c.fail(fmt.Errorf("rsocket: receive index %d: %w", idx, ErrProtocol))
			return
		}
		b := c.rbuf[c.rbufSize+idx*msgSize:]
		if c.peerOrder == binary.BigEndian {
			m = binary.BigEndian.Uint32(b)
		} else {
			m = binary.LittleEndian.Uint32(b)
		}
	}
	if err := c.applyMsg(m); err != nil {
		c.fail(err)
	}
}

func (c *Conn) sendDone(wc *cq.WC) {
	c.stream.sendDone(uint32(wc.ID))
	if wc.Status != cq.Success && c.state&stConnected != 0 {
		c.fail(fmt.Errorf("rsocket: send: %w: %w", syscall.EIO, &cq.CompletionError{ID: wc.ID, Status: wc.Status, VendorErr: wc.VendorErr}))
	}
}

// pollLoop sleeps on the completion channel and processes the CQ, so that
// credits flow and waiters wake even when no Read or Write is running.
func (c *Conn) pollLoop() {
	defer c.done.Done()
	for {
		if err := c.cq.ReqNotify(false); err != nil {
			return
		}
		c.mu.Lock()
		n := c.process()
		c.mu.Unlock()
		if n > 0 {
			continue
		}
		if _, err := c.cqch.Wait(context.Background()); err != nil {
			return
		}
	}
}

// cmLoop follows the ID's CM events: a disconnection by the peer ends the
// connection, after what the CQ already holds has been applied.
func (c *Conn) cmLoop(ctx context.Context) {
	defer c.done.Done()
	for {
		ev, err := c.ch.GetEvent(ctx)
		if err != nil {
			return
		}
		switch ev.Type {
		case rdmacm.EventDisconnected, rdmacm.EventDeviceRemoval:
			c.mu.Lock()
			c.process()
			if c.state&stConnected != 0 {
				select {
				case <-c.closed:
				default:
					c.fail(fmt.Errorf("rsocket: peer disconnected (%s): %w", ev.Type, syscall.ECONNRESET))
				}
			}
			c.state &^= stConnected | stReadable | stWritable
			signal(c.readSig)
			signal(c.writeSig)
			c.mu.Unlock()
			// Flush the QP, so that sends to the gone peer complete.
			c.id.Disconnect()
		}
	}
}

// holdTimeout bounds holdSend.
const holdTimeout = 50 * time.Millisecond

// endHold lets the passive side send although the peer has not.
func (c *Conn) endHold() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isClosed() || !c.holdSend {
		return
	}
	c.holdSend = false
	c.process()
	signal(c.readSig)
	signal(c.writeSig)
}

// kickDelay is when the iWARP active side sends its kick (see dial).
const kickDelay = 20 * time.Millisecond

// keepalive sends a keepalive and schedules the next.
func (c *Conn) keepalive() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isClosed() {
		return
	}
	c.sendKeepalive()
	c.ka.Reset(c.kaEvery)
}

// checkProgress is the user timeout's check, every utTick: while sends
// are outstanding and none completes for utLimit, the connection fails
// with ETIMEDOUT. The QP's own retries do not bound this on rxe:
// rsocket.c's retry_count 7 means "retry forever" there, and on a link
// that went down a retransmission can end with neither a packet nor an
// error (docs/rsocket.md), so without this a blocked Read or Write would
// wait for good.
func (c *Conn) checkProgress() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isClosed() || c.state&stConnected == 0 {
		return
	}
	if !c.sendsOutstanding() || c.sendComps != c.utSeen {
		c.utSeen, c.utIdle = c.sendComps, 0
	} else if c.utIdle += c.utTick; c.utIdle >= c.utLimit {
		c.fail(fmt.Errorf("rsocket: no send completed for %v: %w", c.utIdle, syscall.ETIMEDOUT))
		signal(c.readSig)
		signal(c.writeSig)
		return
	}
	c.ut.Reset(c.utTick)
}

// kick sends one keepalive.
func (c *Conn) kick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.isClosed() {
		c.sendKeepalive()
	}
}

// sendKeepalive sends a zero-length RDMA write (RS_CTRL_KEEPALIVE): it
// needs no answer, and fails the connection when the peer is gone.
func (c *Conn) sendKeepalive() {
	if c.ctrlAvail() && c.state&stConnected != 0 && !c.holdSend {
		c.ctrlSeq++
		m := msgSet(opCtrl, ctrlKeepalive)
		c.swr[0] = uverbs.SendWR{ID: uint64(m), Opcode: uverbs.WRRDMAWrite}
		if _, err := c.qp.PostSend(c.swr[:1]); err != nil {
			c.fail(fmt.Errorf("rsocket: keepalive: %w", err))
		}
	}
}

// wait blocks until sig fires, the deadline passes or the Conn closes.
func (c *Conn) wait(sig chan struct{}, d *deadline) error {
	select {
	case <-sig:
		return nil
	case <-c.closed:
		return errClosed
	case <-d.wait():
		return os.ErrDeadlineExceeded
	}
}

func (c *Conn) opErr(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	return &net.OpError{Op: op, Net: c.network, Source: c.local, Addr: c.remote, Err: err}
}

func (c *Conn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// Read reads data the peer wrote; it returns io.EOF after the peer shut
// down its sending side or closed and all its data was read.
func (c *Conn) Read(p []byte) (int, error) {
	if c == nil {
		return 0, errClosed
	}
	c.rlock.Lock()
	defer c.rlock.Unlock()
	if c.isClosed() {
		return 0, c.opErr("read", errClosed)
	}
	if c.rdl.expired() {
		return 0, c.opErr("read", os.ErrDeadlineExceeded)
	}
	if len(p) == 0 {
		return 0, nil
	}
	c.mu.Lock()
	for !c.readable() {
		if c.isClosed() {
			c.mu.Unlock()
			return 0, c.opErr("read", errClosed)
		}
		c.process()
		if c.readable() {
			break
		}
		if c.state&stReadable == 0 {
			err := c.err
			c.mu.Unlock()
			if err == nil {
				return 0, io.EOF
			}
			return 0, c.opErr("read", err)
		}
		c.mu.Unlock()
		if err := c.wait(c.readSig, &c.rdl); err != nil {
			return 0, c.opErr("read", err)
		}
		c.mu.Lock()
	}
	if c.isClosed() {
		c.mu.Unlock()
		return 0, c.opErr("read", errClosed)
	}
	n := 0
	for n < len(p) {
		off, k := c.nextChunk(len(p) - n)
		if k == 0 {
			break
		}
		copy(p[n:n+k], c.rbuf[off:off+k])
		c.consume(k)
		n += k
	}
	if c.giveCredits() {
		c.sendCredits()
	}
	c.mu.Unlock()
	return n, nil
}

func (c *Conn) canSend() bool { return c.stream.canSend(c.targetLen(c.targetSGE)) }

// Write writes p to the peer, waiting for buffer space and credits.
func (c *Conn) Write(p []byte) (int, error) {
	if c == nil {
		return 0, errClosed
	}
	c.wlock.Lock()
	defer c.wlock.Unlock()
	if c.isClosed() {
		return 0, c.opErr("write", errClosed)
	}
	n, olen := 0, olapStart
	for n < len(p) {
		if c.wdl.expired() {
			return n, c.opErr("write", os.ErrDeadlineExceeded)
		}
		c.mu.Lock()
		for {
			if c.isClosed() {
				c.mu.Unlock()
				return n, c.opErr("write", errClosed)
			}
			if c.canSend() {
				break
			}
			c.process()
			if c.state&stWritable == 0 {
				break
			}
			if c.canSend() {
				break
			}
			c.mu.Unlock()
			if err := c.wait(c.writeSig, &c.wdl); err != nil {
				return n, c.opErr("write", err)
			}
			c.mu.Lock()
		}
		if c.state&stWritable == 0 {
			err := c.err
			if err == nil {
				err = syscall.EPIPE
			}
			c.mu.Unlock()
			return n, c.opErr("write", err)
		}
		xfer := len(p) - n
		if olen < xfer {
			xfer = olen
			if olen < maxTransfer {
				olen <<= 1
			}
		}
		xfer = min(xfer, c.sbufAvail, int(c.targetLen(c.targetSGE)))
		err := c.writeData(p[n : n+xfer])
		c.mu.Unlock()
		if err != nil {
			return n, c.opErr("write", err)
		}
		n += xfer
	}
	return n, nil
}

// writeData copies b into the send ring and writes it into the peer's
// current target buffer (rs_write_data).
func (c *Conn) writeData(b []byte) error {
	off1, n1, n2 := c.reserve(len(b))
	copy(c.sbuf[off1:off1+n1], b)
	c.ssge[0] = uverbs.SGE{Addr: c.smr.Addr() + uint64(off1), Length: uint32(n1), LKey: c.smr.LKey()}
	nsge := 1
	if n2 > 0 {
		copy(c.sbuf[:n2], b[n1:])
		c.ssge[1] = uverbs.SGE{Addr: c.smr.Addr(), Length: uint32(n2), LKey: c.smr.LKey()}
		nsge = 2
	}
	var flags uverbs.SendFlags
	if len(b) <= c.inline {
		flags = uverbs.SendInline
	}
	i := c.targetSGE
	addr := atomic.LoadUint64(c.targetWord64(i, 0))
	rkey := atomic.LoadUint32(c.targetWord32(i, 8))
	length := c.targetLen(i) - uint32(len(b))
	atomic.StoreUint64(c.targetWord64(i, 0), addr+uint64(len(b)))
	atomic.StoreUint32(c.targetWord32(i, 12), length)
	c.wroteTarget(length)
	if err := c.postWriteMsg(c.ssge[:nsge], msgSet(opData, uint32(len(b))), flags, addr, rkey); err != nil {
		c.fail(fmt.Errorf("rsocket: write: %w", err))
		return err
	}
	return nil
}

// sendCtrl sends control message ctrl once a control slot is free.
func (c *Conn) sendCtrl(ctrl uint32, d *deadline) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for (!c.ctrlAvail() || c.holdSend) && c.state&stConnected != 0 {
		if c.isClosed() {
			return errClosed
		}
		c.process()
		if c.ctrlAvail() && !c.holdSend {
			break
		}
		c.mu.Unlock()
		err := c.wait(c.writeSig, d)
		c.mu.Lock()
		if err != nil {
			return err
		}
	}
	if c.state&stConnected == 0 {
		return nil
	}
	c.ctrlSeq++
	return c.postMsg(msgSet(opCtrl, ctrl))
}

// CloseWrite shuts down the sending side (rshutdown(SHUT_WR)): the peer
// reads io.EOF once it has read the data before it. Reading goes on.
func (c *Conn) CloseWrite() error {
	if c == nil {
		return errClosed
	}
	c.wlock.Lock()
	defer c.wlock.Unlock()
	if c.isClosed() {
		return c.opErr("close", errClosed)
	}
	c.mu.Lock()
	if c.state&stWritable == 0 {
		c.mu.Unlock()
		return nil
	}
	c.state &^= stWritable
	ctrl := uint32(ctrlDisconnect)
	if c.state&stReadable != 0 {
		ctrl = ctrlShutdown
	}
	c.mu.Unlock()
	return c.opErr("close", c.sendCtrl(ctrl, &c.wdl))
}

// drainTimeout bounds how long Close waits for a control slot and its
// last sends.
const drainTimeout = 2 * time.Second

// Close tells the peer (RS_CTRL_DISCONNECT, once a control slot is free),
// waits briefly for the sends in flight, disconnects and frees every
// resource of the connection.
func (c *Conn) Close() error {
	if c == nil {
		return errClosed
	}
	first := false
	c.once.Do(func() {
		first = true
		c.mu.Lock()
		connected := c.state&stConnected != 0
		c.mu.Unlock()
		close(c.closed)
		if c.ka != nil {
			c.ka.Stop()
		}
		if c.ut != nil {
			c.ut.Stop()
		}
		c.mu.Lock()
		if c.holdTimer != nil {
			c.holdTimer.Stop()
		}
		c.mu.Unlock()
		if connected {
			var d deadline
			d.init()
			d.set(time.Now().Add(drainTimeout))
			c.mu.Lock()
			c.state &^= stReadable | stWritable
			c.mu.Unlock()
			c.await(d.wait(), c.tellDisconnect)
			c.await(d.wait(), c.sendsDone)
			d.set(time.Time{})
		}
		c.id.Disconnect()
		c.closeErr = c.release()
	})
	if !first {
		return c.opErr("close", errClosed)
	}
	return c.closeErr
}

// tellDisconnect posts RS_CTRL_DISCONNECT once a control slot is free,
// as rshutdown(SHUT_RDWR) waits for one (rs_conn_can_send_ctrl): the
// slots may all be held by credit updates whose completions are not yet
// processed. Without the message a C peer never leaves its rclose: it
// posts its own into the QP our disconnect has failed and waits for a
// completion that never comes. A passive iWARP side that has not heard
// from the peer yet tells it once the hold is over (endHold's time: Close
// stopped its timer). It reports whether it is done (posted, or nothing
// to tell); mu is held.
func (c *Conn) tellDisconnect() bool {
	if c.state&stConnected == 0 {
		return true
	}
	if c.holdSend {
		if time.Now().Before(c.holdUntil) {
			return false
		}
		c.holdSend = false
	}
	if !c.ctrlAvail() {
		return false
	}
	c.ctrlSeq++
	c.postMsg(msgSet(opCtrl, ctrlDisconnect))
	return true
}

// sendsDone says whether every send has completed, or the connection is
// over (rs_conn_all_sends_done); mu is held.
func (c *Conn) sendsDone() bool {
	return !c.sendsOutstanding() || c.state&stConnected == 0
}

// await processes the CQ until done, called with mu held, reports true or
// timeout is closed.
func (c *Conn) await(timeout <-chan struct{}, done func() bool) {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		c.mu.Lock()
		c.process()
		ok := done()
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-tick.C:
		case <-timeout:
			return
		}
	}
}

// release stops the goroutines and frees the kernel objects, then the
// memory the device used. The completion goroutine waits without a
// context (a cancellable one would cost an allocation per wait): closing
// the completion channel ends its wait.
func (c *Conn) release() error {
	if c.stop != nil {
		c.stop() // the CM goroutine
	}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	// Read, Write and the keepalive touch the QP and the buffers under mu,
	// and check for Close after taking it.
	c.mu.Lock()
	c.state = 0
	if c.id != nil {
		add(c.id.Close()) // and the QP, so the CQ can go
	}
	if c.cq != nil {
		add(c.cq.Close())
	}
	if c.cqch != nil {
		add(c.cqch.Close())
	}
	c.mu.Unlock()
	c.done.Wait()

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch != nil {
		add(c.ch.Close())
	}
	for _, m := range []*mr.MR{c.smr, c.rmr, c.tmr} {
		if m != nil {
			add(m.Close())
		}
	}
	for _, b := range [][]byte{c.sbuf, c.rbuf, c.tbuf} {
		if b != nil {
			add(mr.Free(b))
		}
	}
	c.rdl.set(time.Time{})
	c.wdl.set(time.Time{})
	return errors.Join(errs...)
}

// LocalAddr returns the local address.
func (c *Conn) LocalAddr() net.Addr {
	if c == nil {
		return nil
	}
	return c.local
}

// RemoteAddr returns the peer's address.
func (c *Conn) RemoteAddr() net.Addr {
	if c == nil {
		return nil
	}
	return c.remote
}

// SetDeadline sets the read and write deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// SetReadDeadline sets the deadline of Read; a Read waiting when it
// passes returns an error matching os.ErrDeadlineExceeded.
func (c *Conn) SetReadDeadline(t time.Time) error {
	if c == nil || c.isClosed() {
		return errClosed
	}
	c.rdl.set(t)
	return nil
}

// SetWriteDeadline sets the deadline of Write and CloseWrite.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	if c == nil || c.isClosed() {
		return errClosed
	}
	c.wdl.set(t)
	return nil
}

// Addr is an rsocket endpoint address.
type Addr struct{ netip.AddrPort }

// Network returns "rdma".
func (Addr) Network() string { return "rdma" }

// deadline is a settable point in time with a channel closed when it
// passes, as net.Pipe's. Setting allocates; waiting does not.
type deadline struct {
	mu    sync.Mutex
	timer *time.Timer
	ch    chan struct{}
}

func (d *deadline) init() { d.ch = make(chan struct{}) }

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && !d.timer.Stop() {
		<-d.ch // the timer fired: wait for its close
	}
	d.timer = nil
	closed := isDone(d.ch)
	if t.IsZero() {
		if closed {
			d.ch = make(chan struct{})
		}
		return
	}
	if dur := time.Until(t); dur > 0 {
		if closed {
			d.ch = make(chan struct{})
		}
		ch := d.ch
		d.timer = time.AfterFunc(dur, func() { close(ch) })
		return
	}
	if !closed {
		close(d.ch)
	}
}

func (d *deadline) wait() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ch
}

func (d *deadline) expired() bool { return isDone(d.wait()) }

func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

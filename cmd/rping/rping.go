package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// state is enum test_state: how the CM and CQ handlers tell the main flow
// what happened. The numbers are C's, as rping prints them.
type state int32

const (
	idle state = 1 + iota
	connectRequest
	addrResolved
	routeResolved
	connected
	rdmaReadAdv
	rdmaReadComplete
	rdmaWriteAdv
	rdmaWriteComplete
	disconnected
	errorState
)

// resolveTimeout is the 2000 ms rping gives address and route resolution.
const resolveTimeout = 2 * time.Second

// joinTimeout bounds the wait for the CQ goroutine after a disconnect: C
// joins its CQ thread, which ends when the flushed receive completes.
const joinTimeout = 3 * time.Second

// output serializes the writes of the goroutines to stdout and stderr.
// After a fatal CM event it drops everything, as rping's exit(3) from its
// CM thread ends the output there.
type output struct {
	mu             sync.Mutex
	stdout, stderr io.Writer
	debug          bool
	fatal          atomic.Bool
	fatalCode      atomic.Int32
	fatalDone      chan struct{}
	fatalOnce      sync.Once
}

func (o *output) printf(format string, a ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.fatal.Load() {
		fmt.Fprintf(o.stdout, format, a...)
	}
}

func (o *output) eprintf(format string, a ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.fatal.Load() {
		fmt.Fprintf(o.stderr, format, a...)
	}
}

// debugf is DEBUG_LOG.
func (o *output) debugf(format string, a ...any) {
	if o.debug {
		o.printf(format, a...)
	}
}

// perror prints msg and the error as perror(3) does.
func (o *output) perror(msg string, err error) {
	o.eprintf("%s: %s\n", msg, strerror(err))
}

// exit is exit(code) from a thread that is not the main one: the output
// ends and the main flow unwinds.
func (o *output) exit(code int) {
	o.fatalOnce.Do(func() {
		o.mu.Lock()
		o.fatalCode.Store(int32(code))
		o.fatal.Store(true)
		o.mu.Unlock()
		close(o.fatalDone)
	})
}

// strerror is the errno's text as glibc writes it, when err carries one.
func strerror(err error) string {
	var en unix.Errno
	if errors.As(err, &en) {
		s := en.Error()
		r, n := utf8.DecodeRuneInString(s)
		return string(unicode.ToUpper(r)) + s[n:]
	}
	return err.Error()
}

// errnoOf is the errno in err, for the numbers rping prints, or -1.
func errnoOf(err error) int {
	var en unix.Errno
	if errors.As(err, &en) {
		return int(en)
	}
	return -1
}

// control is struct rping_cb: one connection's resources, and for the
// listener and the client also the CM ID.
type control struct {
	o      *options
	out    *output
	server bool

	state atomic.Int32
	sem   chan struct{} // sem_t: every post is one token

	ch    *rdmacm.EventChannel
	cmID  *rdmacm.ID // the client's connection; the server's listener
	child *rdmacm.ID // the server's connection
	req   rdmacm.ConnParam

	pd   *uverbs.PD
	cqch *cq.Channel
	cq   *cq.CQ
	qp   *uverbs.QP

	recvBuf, sendBuf, rdmaBuf, startBuf []byte
	recvMR, sendMR, rdmaMR, startMR     *mr.MR

	remote rdmaInfo // the peer's last advertisement

	cqCancel context.CancelFunc
	cqDone   chan struct{}
}

func newControl(o *options, out *output) *control {
	cb := &control{o: o, out: out, server: o.server == 1, sem: make(chan struct{}, 1024)}
	cb.setState(idle)
	return cb
}

func (cb *control) getState() state  { return state(cb.state.Load()) }
func (cb *control) setState(s state) { cb.state.Store(int32(s)) }

// post is sem_post.
func (cb *control) post() {
	select {
	case cb.sem <- struct{}{}:
	default: // nobody will wait for a thousand posts
	}
}

// wait is sem_wait. It reports false when the program ends meanwhile: a
// fatal CM event or ctx.
func (cb *control) wait(ctx context.Context) bool {
	select {
	case <-cb.sem:
	case <-cb.out.fatalDone:
		return false
	case <-ctx.Done():
		return false
	}
	select {
	case <-cb.out.fatalDone:
		return false
	default:
		return true
	}
}

// dispatcher maps IDs to their control blocks, as rdma_cm_id.context does;
// a connection request's ID inherits its listener's.
type dispatcher struct {
	mu  sync.Mutex
	cbs map[*rdmacm.ID]*control
}

func (d *dispatcher) set(id *rdmacm.ID, cb *control) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cbs[id] = cb
}

func (d *dispatcher) get(e *rdmacm.Event) *control {
	d.mu.Lock()
	defer d.mu.Unlock()
	if cb := d.cbs[e.ID]; cb != nil {
		return cb
	}
	if e.Listener != nil {
		if cb := d.cbs[e.Listener]; cb != nil {
			d.cbs[e.ID] = cb
			return cb
		}
	}
	return nil
}

// cmThread is cm_thread: it takes the channel's events until ctx ends.
func cmThread(ctx context.Context, ch *rdmacm.EventChannel, d *dispatcher, out *output) {
	for {
		e, err := ch.GetEvent(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			out.perror("rdma_get_cm_event", err)
			out.exit(255)
			return
		}
		if e == nil {
			continue // an event of an ID destroyed meanwhile
		}
		cb := d.get(e)
		if cb == nil {
			continue
		}
		if ret := cb.cmaEventHandler(e); ret != 0 {
			out.exit(ret & 0xff)
			return
		}
	}
}

// cmaEventHandler is rping_cma_event_handler.
func (cb *control) cmaEventHandler(e *rdmacm.Event) int {
	id := e.ID
	kind := "child"
	if id == cb.cmID {
		kind = "parent"
	}
	cb.out.debugf("cma_event type %s cma_id %p (%s)\n", e.Type, id, kind)
	ret := 0
	switch e.Type {
	case rdmacm.EventAddrResolved:
		cb.setState(addrResolved)
		if err := id.ResolveRoute(resolveTimeout); err != nil {
			cb.setState(errorState)
			cb.out.perror("rdma_resolve_route", err)
			cb.post()
		}
	case rdmacm.EventRouteResolved:
		cb.setState(routeResolved)
		cb.post()
	case rdmacm.EventConnectRequest:
		cb.setState(connectRequest)
		cb.child, cb.req = id, e.Param
		cb.out.debugf("child cma %p\n", cb.child)
		cb.post()
	case rdmacm.EventConnectResponse:
		cb.out.debugf("CONNECT_RESPONSE\n")
		cb.setState(connected)
		cb.post()
	case rdmacm.EventEstablished:
		cb.out.debugf("ESTABLISHED\n")
		// The server wakes up when the first receive completes.
		if !cb.server {
			cb.setState(connected)
		}
		cb.post()
	case rdmacm.EventAddrError, rdmacm.EventRouteError, rdmacm.EventConnectError,
		rdmacm.EventUnreachable, rdmacm.EventRejected:
		cb.out.eprintf("cma event %s, error %d\n", e.Type, e.Status)
		cb.post()
		ret = -1
	case rdmacm.EventDisconnected:
		who := "client"
		if cb.server {
			who = "server"
		}
		cb.out.eprintf("%s DISCONNECT EVENT...\n", who)
		cb.setState(disconnected)
		cb.post()
	case rdmacm.EventDeviceRemoval:
		cb.out.eprintf("cma detected device removal!!!!\n")
		cb.setState(errorState)
		cb.post()
		ret = -1
	default:
		cb.out.eprintf("unhandled event: %s, ignoring\n", e.Type)
	}
	return ret
}

// serverRecv is server_recv.
func (cb *control) serverRecv(wc *cq.WC) int {
	if wc.ByteLen != infoSize {
		cb.out.eprintf("Received bogus data, size %d\n", wc.ByteLen)
		return -1
	}
	cb.remote = decodeInfo(cb.recvBuf)
	cb.out.debugf("Received rkey %x addr %x len %d from peer\n", cb.remote.rkey, cb.remote.buf, cb.remote.size)
	if s := cb.getState(); s <= connected || s == rdmaWriteComplete {
		cb.setState(rdmaReadAdv)
	} else {
		cb.setState(rdmaWriteAdv)
	}
	return 0
}

// clientRecv is client_recv.
func (cb *control) clientRecv(wc *cq.WC) int {
	if wc.ByteLen != infoSize {
		cb.out.eprintf("Received bogus data, size %d\n", wc.ByteLen)
		return -1
	}
	if cb.getState() == rdmaReadAdv {
		cb.setState(rdmaWriteAdv)
	} else {
		cb.setState(rdmaWriteComplete)
	}
	return 0
}

// postRecv is ibv_post_recv of rq_wr: the whole recv_buf.
func (cb *control) postRecv() error {
	_, err := cb.qp.PostRecv([]uverbs.RecvWR{{SGE: []uverbs.SGE{{Addr: cb.recvMR.Addr(), Length: infoSize, LKey: cb.recvMR.LKey()}}}})
	return err
}

// postSendInfo is ibv_post_send of sq_wr: a signaled SEND of send_buf.
func (cb *control) postSendInfo() error {
	_, err := cb.qp.PostSend([]uverbs.SendWR{{
		Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled,
		SGE: []uverbs.SGE{{Addr: cb.sendMR.Addr(), Length: infoSize, LKey: cb.sendMR.LKey()}},
	}})
	return err
}

// postRDMA is ibv_post_send of rdma_sq_wr: a signaled RDMA READ or WRITE
// of length bytes of rdma_buf, with the peer's advertised buffer.
func (cb *control) postRDMA(op uverbs.WROpcode, length uint32) error {
	_, err := cb.qp.PostSend([]uverbs.SendWR{{
		Opcode: op, Flags: uverbs.SendSignaled,
		SGE:        []uverbs.SGE{{Addr: cb.rdmaMR.Addr(), Length: length, LKey: cb.rdmaMR.LKey()}},
		RemoteAddr: cb.remote.buf, RKey: cb.remote.rkey,
	}})
	return err
}

// cqEventHandler is rping_cq_event_handler: it polls the CQ empty. It
// returns 1 when it saw flushed work, an error status, or 0.
func (cb *control) cqEventHandler() int {
	var wcs [1]cq.WC
	flushed := 0
	ret := 0
	for {
		n, err := cb.cq.Poll(wcs[:])
		if err != nil {
			cb.out.eprintf("poll error %d\n", -errnoOf(err))
			ret = -1
			break
		}
		if n == 0 {
			return flushed
		}
		wc := &wcs[0]
		if wc.Status != cq.Success {
			if wc.Status == cq.WRFlushErr {
				flushed = 1
				continue
			}
			cb.out.eprintf("cq completion failed status %d\n", int(wc.Status))
			ret = -1
			break
		}
		switch wc.Opcode {
		case cq.OpSend:
			cb.out.debugf("send completion\n")
			continue
		case cq.OpRDMAWrite:
			cb.out.debugf("rdma write completion\n")
			cb.setState(rdmaWriteComplete)
			cb.post()
			continue
		case cq.OpRDMARead:
			cb.out.debugf("rdma read completion\n")
			cb.setState(rdmaReadComplete)
			cb.post()
			continue
		case cq.OpRecv:
			cb.out.debugf("recv completion\n")
			if cb.server {
				ret = cb.serverRecv(wc)
			} else {
				ret = cb.clientRecv(wc)
			}
			if ret != 0 {
				cb.out.eprintf("recv wc error: %d\n", ret)
				break
			}
			if err := cb.postRecv(); err != nil {
				ret = errnoOf(err)
				cb.out.eprintf("post recv error: %d\n", ret)
				break
			}
			cb.post()
			continue
		default:
			cb.out.debugf("unknown!!!!! completion\n")
			ret = -1
		}
		break
	}
	cb.setState(errorState)
	cb.post()
	return ret
}

// startCQThread starts cq_thread.
func (cb *control) startCQThread(ctx context.Context) {
	ctx, cb.cqCancel = context.WithCancel(ctx)
	cb.cqDone = make(chan struct{})
	go cb.cqThread(ctx)
}

// cqThread is cq_thread: it sleeps on the completion channel, re-arms the
// CQ and handles what it holds, until flushed work or an error.
func (cb *control) cqThread(ctx context.Context) {
	defer close(cb.cqDone)
	cb.out.debugf("cq_thread started.\n")
	for {
		c, err := cb.cqch.Wait(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			cb.out.eprintf("Failed to get cq event!\n")
			return
		}
		if c != cb.cq {
			cb.out.eprintf("Unknown CQ!\n")
			return
		}
		if err := cb.cq.ReqNotify(false); err != nil {
			cb.out.eprintf("Failed to set notify!\n")
			return
		}
		if cb.cqEventHandler() != 0 {
			return
		}
	}
}

// joinCQThread is pthread_join of the CQ thread, which ends by itself on
// the flushed receive; it is cancelled if it does not within joinTimeout.
func (cb *control) joinCQThread() {
	if cb.cqDone == nil {
		return
	}
	if !cb.out.fatal.Load() {
		select {
		case <-cb.cqDone:
		case <-time.After(joinTimeout):
		}
	}
	cb.cancelCQThread()
}

// cancelCQThread is pthread_cancel and pthread_join.
func (cb *control) cancelCQThread() {
	if cb.cqDone == nil {
		return
	}
	cb.cqCancel()
	<-cb.cqDone
	cb.cqDone = nil
}

// setupQP is rping_setup_qp: a PD, a completion channel, one CQ for sends
// and receives, armed, and the QP on id.
func (cb *control) setupQP(id *rdmacm.ID) int {
	var err error
	vctx := id.Context()
	if vctx == nil {
		cb.out.eprintf("ibv_alloc_pd failed\n")
		return int(unix.ENODEV)
	}
	if cb.pd, err = vctx.AllocPD(); err != nil {
		cb.out.eprintf("ibv_alloc_pd failed\n")
		return errnoOf(err)
	}
	cb.out.debugf("created pd %p\n", cb.pd)
	if cb.cqch, err = cq.NewChannel(vctx); err != nil {
		cb.out.eprintf("ibv_create_comp_channel failed\n")
		cb.freeQP()
		return errnoOf(err)
	}
	cb.out.debugf("created channel %p\n", cb.cqch)
	if cb.cq, err = cq.New(vctx, sqDepth*2, &cq.Options{Channel: cb.cqch}); err != nil {
		cb.out.eprintf("ibv_create_cq failed\n")
		cb.freeQP()
		return errnoOf(err)
	}
	cb.out.debugf("created cq %p\n", cb.cq)
	if err := cb.cq.ReqNotify(false); err != nil {
		cb.out.eprintf("ibv_create_cq failed\n")
		cb.freeQP()
		return errnoOf(err)
	}
	init := uverbs.QPInit{
		Type: uverbs.RC, SendCQ: cb.cq, RecvCQ: cb.cq,
		Cap: uverbs.QPCap{MaxSendWR: sqDepth, MaxRecvWR: 2, MaxRecvSGE: 1, MaxSendSGE: 1},
	}
	if err := id.CreateQP(cb.pd, init); err != nil {
		cb.out.perror("rdma_create_qp", err)
		cb.freeQP()
		return -1
	}
	cb.qp = id.QP()
	cb.out.debugf("created qp %p\n", cb.qp)
	return 0
}

// freeQP is rping_free_qp. The QP belongs to the ID, which destroys it
// again (harmlessly) when it closes.
func (cb *control) freeQP() {
	if cb.qp != nil {
		cb.qp.Close()
		cb.qp = nil
	}
	if cb.cq != nil {
		cb.cq.Close()
		cb.cq = nil
	}
	if cb.cqch != nil {
		cb.cqch.Close()
		cb.cqch = nil
	}
	if cb.pd != nil {
		cb.pd.Close()
		cb.pd = nil
	}
}

// region allocates and registers n bytes.
func (cb *control) region(n int, access mr.Access) ([]byte, *mr.MR, error) {
	b, err := mr.Alloc(n)
	if err != nil {
		return nil, nil, err
	}
	m, err := mr.Register(cb.pd, b, access)
	if err != nil {
		mr.Free(b)
		return nil, nil, err
	}
	return b, m, nil
}

// setupBuffers is rping_setup_buffers.
func (cb *control) setupBuffers() int {
	cb.out.debugf("rping_setup_buffers called on cb %p\n", cb)
	remote := mr.LocalWrite | mr.RemoteRead | mr.RemoteWrite
	bufs := []struct {
		buf  *[]byte
		mr   **mr.MR
		size int
		acc  mr.Access
		name string
	}{
		{&cb.recvBuf, &cb.recvMR, infoSize, mr.LocalWrite, "recv_buf"},
		{&cb.sendBuf, &cb.sendMR, infoSize, 0, "send_buf"},
		{&cb.rdmaBuf, &cb.rdmaMR, cb.o.size, remote, "rdma_buf"},
		{&cb.startBuf, &cb.startMR, cb.o.size, remote, "start_buf"},
	}
	if cb.server {
		bufs = bufs[:3]
	}
	for _, b := range bufs {
		var err error
		if *b.buf, *b.mr, err = cb.region(b.size, b.acc); err != nil {
			cb.out.eprintf("%s reg_mr failed\n", b.name)
			cb.releaseBuffers()
			return errnoOf(err)
		}
	}
	cb.out.debugf("allocated & registered buffers...\n")
	return 0
}

// freeBuffers is rping_free_buffers.
func (cb *control) freeBuffers() {
	cb.out.debugf("rping_free_buffers called on cb %p\n", cb)
	cb.releaseBuffers()
}

func (cb *control) releaseBuffers() {
	for _, b := range []struct {
		buf *[]byte
		mr  **mr.MR
	}{{&cb.recvBuf, &cb.recvMR}, {&cb.sendBuf, &cb.sendMR}, {&cb.rdmaBuf, &cb.rdmaMR}, {&cb.startBuf, &cb.startMR}} {
		if *b.mr != nil {
			(*b.mr).Close()
			*b.mr = nil
		}
		if *b.buf != nil {
			mr.Free(*b.buf)
			*b.buf = nil
		}
	}
}

// formatSend is rping_format_send: advertise buf of region m.
func (cb *control) formatSend(m *mr.MR) {
	info := rdmaInfo{buf: m.Addr(), rkey: m.RKey(), size: uint32(cb.o.size)}
	info.encode(cb.sendBuf)
	cb.out.debugf("RDMA addr %x rkey %x len %d\n", info.buf, info.rkey, info.size)
}

// accept is rping_accept: rdma_accept(child, NULL), which takes the
// request's RDMA read limits, capped by the device, and 7 retries.
func (cb *control) accept(ctx context.Context) int {
	cb.out.debugf("accepting client connection request\n")
	p := rdmacm.ConnParam{
		ResponderResources: cb.req.ResponderResources,
		InitiatorDepth:     cb.req.InitiatorDepth,
		RetryCount:         7,
		RNRRetryCount:      7,
	}
	if attr, err := cb.child.Context().QueryDevice(); err == nil {
		p.ResponderResources = uint8(min(int(p.ResponderResources), attr.MaxQPRdAtom))
		p.InitiatorDepth = uint8(min(int(p.InitiatorDepth), attr.MaxQPInitRdAtom))
	}
	if err := cb.child.Accept(&p); err != nil {
		cb.out.perror("rdma_accept", err)
		return -1
	}
	if !cb.wait(ctx) {
		return -1
	}
	if cb.getState() == errorState {
		cb.out.eprintf("wait for CONNECTED state %d\n", cb.getState())
		return -1
	}
	return 0
}

// expect is the check after each sem_wait of the ping loops.
func (cb *control) expect(ctx context.Context, want state, name string) bool {
	if !cb.wait(ctx) {
		return false
	}
	if s := cb.getState(); s != want {
		cb.out.eprintf("wait for %s state %d\n", name, s)
		return false
	}
	return true
}

// testServer is rping_test_server.
func (cb *control) testServer(ctx context.Context) int {
	ret := -1
	for {
		// The client's source advertisement.
		if !cb.expect(ctx, rdmaReadAdv, "RDMA_READ_ADV") {
			break
		}
		cb.out.debugf("server received sink adv\n")
		if err := cb.postRDMA(uverbs.WRRDMARead, cb.remote.size); err != nil {
			ret = errnoOf(err)
			cb.out.eprintf("post send error %d\n", ret)
			break
		}
		cb.out.debugf("server posted rdma read req \n")
		if !cb.expect(ctx, rdmaReadComplete, "RDMA_READ_COMPLETE") {
			break
		}
		cb.out.debugf("server received read complete\n")
		if cb.o.verbose > 0 {
			cb.out.printf("server ping data: %s\n", cString(cb.rdmaBuf))
		}
		if err := cb.postSendInfo(); err != nil {
			ret = errnoOf(err)
			cb.out.eprintf("post send error %d\n", ret)
			break
		}
		cb.out.debugf("server posted go ahead\n")

		// The client's sink advertisement.
		if !cb.expect(ctx, rdmaWriteAdv, "RDMA_WRITE_ADV") {
			break
		}
		cb.out.debugf("server received sink adv\n")
		length := uint32(len(cString(cb.rdmaBuf)) + 1)
		cb.out.debugf("rdma write from lkey %x laddr %x len %d\n", cb.rdmaMR.LKey(), cb.rdmaMR.Addr(), length)
		if err := cb.postRDMA(uverbs.WRRDMAWrite, length); err != nil {
			ret = errnoOf(err)
			cb.out.eprintf("post send error %d\n", ret)
			break
		}
		if !cb.expect(ctx, rdmaWriteComplete, "RDMA_WRITE_COMPLETE") {
			break
		}
		cb.out.debugf("server rdma write complete \n")
		if err := cb.postSendInfo(); err != nil {
			ret = errnoOf(err)
			cb.out.eprintf("post send error %d\n", ret)
			break
		}
		cb.out.debugf("server posted go ahead\n")
	}
	if cb.getState() == disconnected {
		return 0
	}
	return ret
}

// bindServer is rping_bind_server.
func (cb *control) bindServer() int {
	if err := cb.cmID.Bind(netip.AddrPortFrom(cb.o.addr, cb.o.port)); err != nil {
		cb.out.perror("rdma_bind_addr", err)
		return -1
	}
	cb.out.debugf("rdma_bind_addr successful\n")
	cb.out.debugf("rdma_listen\n")
	if err := cb.cmID.Listen(3); err != nil {
		cb.out.perror("rdma_listen", err)
		return -1
	}
	return 0
}

// runServer is rping_run_server: one connection.
func (cb *control) runServer(ctx context.Context) int {
	if ret := cb.bindServer(); ret != 0 {
		return ret
	}
	if !cb.wait(ctx) {
		return -1
	}
	if s := cb.getState(); s != connectRequest {
		cb.out.eprintf("wait for CONNECT_REQUEST state %d\n", s)
		return -1
	}
	return cb.serveConnection(ctx, false)
}

// serveConnection runs the accepted connection on cb.child, as the end of
// rping_run_server and rping_persistent_server_thread do, and destroys
// the child ID.
func (cb *control) serveConnection(ctx context.Context, persistent bool) (ret int) {
	defer cb.child.Close()
	if ret = cb.setupQP(cb.child); ret != 0 {
		cb.out.eprintf("setup_qp failed: %d\n", ret)
		return ret
	}
	defer cb.freeQP()
	if ret = cb.setupBuffers(); ret != 0 {
		cb.out.eprintf("rping_setup_buffers failed: %d\n", ret)
		return ret
	}
	defer cb.freeBuffers()
	if err := cb.postRecv(); err != nil {
		ret = errnoOf(err)
		cb.out.eprintf("ibv_post_recv failed: %d\n", ret)
		return ret
	}
	cb.startCQThread(ctx)
	if ret = cb.accept(ctx); ret != 0 {
		cb.out.eprintf("connect error %d\n", ret)
		cb.cancelCQThread()
		return ret
	}
	ret = cb.testServer(ctx)
	if ret != 0 && !persistent {
		cb.out.eprintf("rping server failed: %d\n", ret)
	}
	cb.child.Disconnect()
	cb.joinCQThread()
	if persistent {
		return 0
	}
	return ret
}

// clone is clone_cb: the listener's control block for a new connection.
func (cb *control) clone() *control {
	c := newControl(cb.o, cb.out)
	c.setState(cb.getState())
	c.ch, c.cmID, c.child, c.req = cb.ch, cb.cmID, cb.child, cb.req
	return c
}

// runPersistentServer is rping_run_persistent_server: a goroutine per
// connection, until ctx ends or an error.
func (cb *control) runPersistentServer(ctx context.Context, d *dispatcher) int {
	if ret := cb.bindServer(); ret != 0 {
		return ret
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		if !cb.wait(ctx) {
			return -1
		}
		if s := cb.getState(); s != connectRequest {
			cb.out.eprintf("wait for CONNECT_REQUEST state %d\n", s)
			return -1
		}
		c := cb.clone()
		d.set(c.child, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.serveConnection(ctx, true)
		}()
	}
}

// testClient is rping_test_client.
func (cb *control) testClient(ctx context.Context) int {
	ret := 0
	start := byte(firstChar)
	for ping := 0; cb.o.count == 0 || ping < cb.o.count; ping++ {
		cb.setState(rdmaReadAdv)
		start = formatPing(cb.startBuf, ping, start)

		cb.formatSend(cb.startMR)
		if err := cb.postSendInfo(); err != nil {
			ret = errnoOf(err)
			cb.out.eprintf("post send error %d\n", ret)
			break
		}
		// The server's go ahead after its RDMA READ.
		if !cb.expect(ctx, rdmaWriteAdv, "RDMA_WRITE_ADV") {
			ret = -1
			break
		}
		cb.formatSend(cb.rdmaMR)
		if err := cb.postSendInfo(); err != nil {
			ret = errnoOf(err)
			cb.out.eprintf("post send error %d\n", ret)
			break
		}
		// The server's go ahead after its RDMA WRITE.
		if !cb.expect(ctx, rdmaWriteComplete, "RDMA_WRITE_COMPLETE") {
			ret = -1
			break
		}
		if cb.o.validate > 0 && string(cb.startBuf) != string(cb.rdmaBuf) {
			cb.out.eprintf("data mismatch!\n")
			ret = -1
			break
		}
		if cb.o.verbose > 0 {
			cb.out.printf("ping data: %s\n", cString(cb.rdmaBuf))
		}
	}
	if cb.getState() == disconnected {
		return 0
	}
	return ret
}

// connectClient is rping_connect_client.
func (cb *control) connectClient(ctx context.Context) int {
	p := rdmacm.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7}
	if err := cb.cmID.Connect(&p); err != nil {
		cb.out.perror("rdma_connect", err)
		return -1
	}
	if !cb.wait(ctx) {
		return -1
	}
	if s := cb.getState(); s != connected {
		cb.out.eprintf("wait for CONNECTED state %d\n", s)
		return -1
	}
	cb.out.debugf("rdma_connect successful\n")
	return 0
}

// bindClient is rping_bind_client: address and route resolution.
func (cb *control) bindClient(ctx context.Context) int {
	var src netip.AddrPort
	if cb.o.source.IsValid() {
		src = netip.AddrPortFrom(cb.o.source, 0)
	}
	if err := cb.cmID.ResolveAddr(src, netip.AddrPortFrom(cb.o.addr, cb.o.port), resolveTimeout); err != nil {
		cb.out.perror("rdma_resolve_addr", err)
		return -1
	}
	if !cb.wait(ctx) {
		return -1
	}
	if s := cb.getState(); s != routeResolved {
		cb.out.eprintf("waiting for addr/route resolution state %d\n", s)
		return -1
	}
	cb.out.debugf("rdma_resolve_addr - rdma_resolve_route successful\n")
	return 0
}

// runClient is rping_run_client.
func (cb *control) runClient(ctx context.Context) (ret int) {
	if ret = cb.bindClient(ctx); ret != 0 {
		return ret
	}
	if ret = cb.setupQP(cb.cmID); ret != 0 {
		cb.out.eprintf("setup_qp failed: %d\n", ret)
		return ret
	}
	defer cb.freeQP()
	if ret = cb.setupBuffers(); ret != 0 {
		cb.out.eprintf("rping_setup_buffers failed: %d\n", ret)
		return ret
	}
	defer cb.freeBuffers()
	if err := cb.postRecv(); err != nil {
		ret = errnoOf(err)
		cb.out.eprintf("ibv_post_recv failed: %d\n", ret)
		return ret
	}
	cb.startCQThread(ctx)
	if ret = cb.connectClient(ctx); ret != 0 {
		cb.out.eprintf("connect error %d\n", ret)
		// C joins its CQ thread here, and hangs when rdma_connect failed
		// at once (siw: a refused TCP connection): nothing flushes the
		// receive. Cancel it instead.
		cb.cancelCQThread()
		return ret
	}
	if ret = cb.testClient(ctx); ret != 0 {
		cb.out.eprintf("rping client failed: %d\n", ret)
	}
	cb.cmID.Disconnect()
	cb.joinCQThread()
	return ret
}

// run is the whole program with args (without the program name); it
// returns rping's exit status.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is run that gives up when ctx ends; a persistent server (-P)
// runs until then.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out := &output{stdout: stdout, stderr: stderr, fatalDone: make(chan struct{})}
	// Options print their debug lines only once -d was seen.
	o, ret := parseArgs(ctx, args, stdout, stderr)
	if ret != 0 {
		return ret & 0xff
	}
	if o.selfQP {
		fmt.Fprintf(stderr, "rping: -q (self-created, self-modified QP) is not supported by this port\n")
		return int(unix.EINVAL)
	}
	out.debug = o.debug > 0
	ret = rping(ctx, &o, out)
	if out.fatal.Load() {
		return int(out.fatalCode.Load())
	}
	return ret & 0xff
}

// rping is rping's main after option parsing.
func rping(ctx context.Context, o *options, out *output) int {
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		if errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENOENT) {
			// librdmacm reports a missing rdma_cm or device as ENODEV.
			out.eprintf("No RDMA devices were detected\n")
			return int(unix.ENODEV)
		} else {
			out.perror("failed to create RDMA CM event channel", err)
		}
		return errnoOf(err)
	}
	defer ch.Close()
	cb := newControl(o, out)
	cb.ch = ch
	if cb.cmID, err = ch.CreateID(rdmacm.TCP); err != nil {
		out.perror("rdma_create_id", err)
		return -1
	}
	out.debugf("created cm_id %p\n", cb.cmID)
	d := &dispatcher{cbs: map[*rdmacm.ID]*control{cb.cmID: cb}}

	cmCtx, cmCancel := context.WithCancel(ctx)
	cmDone := make(chan struct{})
	go func() {
		defer close(cmDone)
		cmThread(cmCtx, ch, d, out)
	}()

	var ret int
	switch {
	case cb.server && o.persistent:
		ret = cb.runPersistentServer(ctx, d)
	case cb.server:
		ret = cb.runServer(ctx)
	default:
		ret = cb.runClient(ctx)
	}

	out.debugf("destroy cm_id %p\n", cb.cmID)
	cb.cmID.Close()
	cmCancel()
	<-cmDone
	return ret
}

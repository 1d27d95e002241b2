package rdmacm

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
	"github.com/purerdma/purerdma/uverbs"
)

// PortSpace is an ID's port space (enum rdma_port_space): TCP for
// reliable connected QPs, UDP for unreliable datagrams.
type PortSpace uint16

// Port spaces.
const (
	TCP PortSpace = 0x106 // RDMA_PS_TCP
	UDP PortSpace = 0x111 // RDMA_PS_UDP
)

// ErrRejected matches the error of a rejected connection. It matches
// syscall.ECONNREFUSED as well, the errno librdmacm's rsockets and librpma
// give a rejected connect.
var ErrRejected = verbs.NewSentinel("connection rejected", syscall.ECONNREFUSED)

// ErrPrivateData is returned when private data exceeds what the
// connection manager can carry; the error says the limit. Too much data is
// an invalid argument, so it is a kind of uverbs.ErrInvalid and matches
// syscall.EINVAL, which librdmacm sets.
var ErrPrivateData = verbs.NewSentinel("private data too long", uverbs.ErrInvalid)

// ConnParam are the parameters of Connect and Accept (struct
// rdma_conn_param), and what the peer sent in an event.
//
// Every value is seen from the side that holds it. In Connect and Accept
// they are the caller's: ResponderResources is how many RDMA reads and
// atomics the peer may have outstanding towards us (our QP's
// max_dest_rd_atomic), InitiatorDepth how many we may have towards the
// peer (max_rd_atomic). A nil *ConnParam means librdmacm's NULL: the
// device's maxima, lowered by Accept to what the request offers, and 7
// transport and 7 RNR retries. In a non-nil ConnParam, MaxInitiatorDepth
// and MaxResponderResources mean the same maxima, other values are used
// as they are (more than the device's maximum is an error), and 0 means
// none: a QP with InitiatorDepth 0 cannot issue an RDMA read or atomic
// (PostSend refuses them), and RetryCount 0 gives up at the first lost
// packet. The peer limits what we get: our InitiatorDepth is at most its
// ResponderResources.
type ConnParam struct {
	PrivateData []byte
	// ResponderResources is how many RDMA reads and atomics the peer may
	// have outstanding towards us; InitiatorDepth how many we may have
	// towards it. In an event, both are the receiving side's view: see
	// Event.Param.
	ResponderResources uint8
	InitiatorDepth     uint8
	FlowControl        uint8
	RetryCount         uint8 // transport retries, 0-7
	// RNRRetryCount is how often the peer's QP resends a message we have
	// no receive posted for, 0-7 (7: forever). It travels in the
	// connection messages and sets the other side's QP: Accept's count is
	// the client's, Connect's the server's.
	RNRRetryCount uint8
	SRQ           bool
	// QPNum is the QP to connect. Connect and Accept fill it in from the
	// ID's QP when 0.
	QPNum uint32
	QKey  uint32 // UD
	// AH is the address of a UD peer, in the events of the UDP port space:
	// create an address handle from it to send to QPNum with QKey.
	AH uverbs.AHAttr
}

// ID is a connection manager identifier (struct rdma_cm_id).
type ID struct {
	ch     *EventChannel
	handle uint32 // the kernel's id
	uid    uint64
	ps     PortSpace

	mu      sync.Mutex
	closed  bool
	done    chan struct{} // closed by Close; made by doneCh
	ended   bool          // the connection has ended (markGone)
	gone    chan struct{} // closed when ended is set; made by goneCh
	ownCh   bool          // ch is the ID's own (Dial, Accept): Close closes it
	private []byte        // the peer's private data (Dial, Listener.Accept)
	dev     *device       // the verbs device the ID is bound to, once known
	port    uint8
	qp      *uverbs.QP
	own     ownedQP  // what CreateQP made besides the QP
	req     rdLimits // a connection request's read limits, in our view
	joins   []*mcJoin
}

// CreateID creates an ID on the channel (rdma_create_id).
func (ch *EventChannel) CreateID(ps PortSpace) (*ID, error) {
	if ch == nil {
		return nil, ErrClosed
	}
	if ch.isClosed() {
		return nil, ErrClosed
	}
	if ps != TCP && ps != UDP {
		return nil, fmt.Errorf("rdmacm: port space %#x not supported: %w", uint16(ps), uverbs.ErrInvalid)
	}
	id := &ID{ch: ch, ps: ps}
	if err := ch.register(id); err != nil {
		return nil, err
	}
	req := abi.UcmCreateID{UID: id.uid, PS: uint16(ps)}
	var resp abi.UcmCreateIDResp
	if err := ch.do(abi.RDMA_USER_CM_CMD_CREATE_ID, ucmd.Bytes(&req), 8, ucmd.Bytes(&resp)); err != nil {
		ch.unregister(id)
		return nil, err
	}
	id.handle = resp.ID
	return id, nil
}

// Channel returns the ID's event channel.
func (id *ID) Channel() *EventChannel {
	if id == nil {
		return nil
	}
	return id.ch
}

// PortSpace returns the ID's port space.
func (id *ID) PortSpace() PortSpace {
	if id == nil {
		return 0
	}
	return id.ps
}

// Bind binds the ID to a local address and port (rdma_bind_addr). An
// address that belongs to an RDMA device binds the ID to that device; a
// port of 0 picks a free one.
func (id *ID) Bind(addr netip.AddrPort) error {
	if id == nil {
		return ErrClosed
	}
	req := abi.UcmBind{ID: id.handle}
	req.AddrSize = uint16(encodeSockaddr(req.Addr[:], addr))
	if err := id.do(abi.RDMA_USER_CM_CMD_BIND, ucmd.Bytes(&req), -1, nil); err != nil {
		return fmt.Errorf("rdmacm: bind %s: %w", addr, err)
	}
	if addr.Addr().IsValid() && !addr.Addr().IsUnspecified() {
		return id.bindDevice()
	}
	return nil
}

// ResolveAddr starts resolving dst, and src if given, to RDMA addresses
// (rdma_resolve_addr). EventAddrResolved or EventAddrError follows within
// timeout; after EventAddrResolved the ID is bound to a device.
func (id *ID) ResolveAddr(src, dst netip.AddrPort, timeout time.Duration) error {
	if id == nil {
		return ErrClosed
	}
	req := abi.UcmResolveAddr{ID: id.handle, TimeoutMs: ms(timeout)}
	if src.Addr().IsValid() {
		req.SrcSize = uint16(encodeSockaddr(req.SrcAddr[:], src))
	}
	req.DstSize = uint16(encodeSockaddr(req.DstAddr[:], dst))
	if err := id.do(abi.RDMA_USER_CM_CMD_RESOLVE_ADDR, ucmd.Bytes(&req), -1, nil); err != nil {
		return fmt.Errorf("rdmacm: resolve %s: %w", dst, err)
	}
	return nil
}

// ResolveRoute starts resolving the route to the resolved address
// (rdma_resolve_route); EventRouteResolved or EventRouteError follows.
func (id *ID) ResolveRoute(timeout time.Duration) error {
	if id == nil {
		return ErrClosed
	}
	req := abi.UcmResolveRoute{ID: id.handle, TimeoutMs: ms(timeout)}
	if err := id.do(abi.RDMA_USER_CM_CMD_RESOLVE_ROUTE, ucmd.Bytes(&req), -1, nil); err != nil {
		return fmt.Errorf("rdmacm: resolve route: %w", err)
	}
	return nil
}

func ms(d time.Duration) uint32 {
	if d <= 0 {
		return 2000 // librdmacm's examples' usual timeout
	}
	return uint32(min(d.Milliseconds(), 1<<31-1))
}

// Listen makes a bound ID listen for connection requests (rdma_listen);
// each arrives as EventConnectRequest with a new ID. backlog 0 is the
// kernel's default.
func (id *ID) Listen(backlog int) error {
	if id == nil {
		return ErrClosed
	}
	req := abi.UcmListen{ID: id.handle, Backlog: uint32(max(backlog, 0))}
	if err := id.do(abi.RDMA_USER_CM_CMD_LISTEN, ucmd.Bytes(&req), -1, nil); err != nil {
		return fmt.Errorf("rdmacm: listen: %w", err)
	}
	return nil
}

// privateLimit checks private data against the kernel's limit for op.
func privateLimit(op string, data []byte, limit int) error {
	if len(data) > limit {
		return fmt.Errorf("rdmacm: %s takes at most %d bytes of private data, got %d: %w", op, limit, len(data), ErrPrivateData)
	}
	return nil
}

// connParam is the kernel's form of p, with the read limits and retry
// counts wireParam computed (for UDP, p's own) and the ID's QP.
func (id *ID) connParam(p *ConnParam, lim rdLimits, retry, rnr uint8) abi.UcmConnParam {
	k := abi.UcmConnParam{
		QPNum:              p.QPNum,
		QKey:               p.QKey,
		PrivateDataLen:     uint8(len(p.PrivateData)),
		ResponderResources: lim.resp,
		InitiatorDepth:     lim.init,
		FlowControl:        p.FlowControl,
		RetryCount:         retry,
		RNRRetryCount:      rnr,
		Valid:              1,
	}
	copy(k.PrivateData[:], p.PrivateData)
	if p.SRQ {
		k.SRQ = 1
	}
	if k.QPNum == 0 && id.qp != nil {
		k.QPNum = id.qp.Num()
	}
	return k
}

// wire computes what Connect (req nil) or Accept sends for p: for the
// TCP port space wireParam's values with the device's maxima, for UDP
// p's own, which the kernel does not use.
func (id *ID) wire(p *ConnParam, req *rdLimits) (rdLimits, uint8, uint8, error) {
	if id.ps != TCP {
		q := paramOr(p)
		return rdLimits{resp: q.ResponderResources, init: q.InitiatorDepth}, q.RetryCount, q.RNRRetryCount, nil
	}
	dev, err := id.limits()
	if err != nil {
		return rdLimits{}, 0, 0, err
	}
	return wireParam(p, dev, req)
}

// Connect starts connecting to the resolved destination (rdma_connect).
// For RC the ID needs a QP (CreateQP). The active side's events are
// EventEstablished, or EventRejected, EventUnreachable or
// EventConnectError; the package drives the QP to RTS before reporting
// EventEstablished.
//
// A nil p is what librdmacm's NULL is: the device's maxima of RDMA reads
// and atomics each way (max_qp_init_rd_atom, max_qp_rd_atom), 7
// transport retries and 7 RNR retries, no private data. The peer's
// Accept may lower the read limits; see ConnParam.
func (id *ID) Connect(p *ConnParam) error {
	if id == nil {
		return ErrClosed
	}
	limit := abi.CMA_MAX_PRIVATE_DATA_REQ
	if id.ps == UDP {
		limit = abi.CMA_MAX_PRIVATE_DATA_SIDR_REQ
	}
	if err := privateLimit("connect", paramOr(p).PrivateData, limit); err != nil {
		return err
	}
	lim, retry, rnr, err := id.wire(p, nil)
	if err != nil {
		return fmt.Errorf("rdmacm: connect: %w", err)
	}
	req := abi.UcmConnect{ID: id.handle, ConnParam: id.connParam(paramOr(p), lim, retry, rnr)}
	w := write
	if id.iwarp() {
		// siw opens the TCP connection inside the command, and a
		// signal that interrupts it there drops the connection it
		// made: see writeUnsignalled.
		w = writeUnsignalled
	}
	if err := id.doWith(w, abi.RDMA_USER_CM_CMD_CONNECT, ucmd.Bytes(&req), -1, nil); err != nil {
		return fmt.Errorf("rdmacm: connect: %w", err)
	}
	id.iwarpReads(lim.init)
	return nil
}

// Accept accepts the connection request that created the ID
// (rdma_accept). It moves the ID's QP to RTR and RTS first, as librdmacm
// does; EventEstablished follows when the peer confirms.
//
// A nil p is what librdmacm's NULL is: as many RDMA reads and atomics
// each way as the request offers, lowered to the device's maxima, and
// 7 transport and 7 RNR retries, no private data. The RNR retry count
// given to Accept is the one the client's QP uses (it travels in the
// reply); the server's own QP uses the client's. To send private data
// and keep these defaults, set InitiatorDepth to MaxInitiatorDepth,
// ResponderResources to MaxResponderResources and the retry counts to 7.
func (id *ID) Accept(p *ConnParam) error {
	if id == nil {
		return ErrClosed
	}
	limit := abi.CMA_MAX_PRIVATE_DATA_REP
	if id.ps == UDP {
		limit = abi.CMA_MAX_PRIVATE_DATA_SIDR_REP
	}
	if err := privateLimit("accept", paramOr(p).PrivateData, limit); err != nil {
		return err
	}
	lim, retry, rnr, err := id.wire(p, &id.req)
	if err != nil {
		return fmt.Errorf("rdmacm: accept: %w", err)
	}
	if id.qp != nil && id.ps == TCP {
		if err := id.toRTS(int(lim.resp), int(lim.init)); err != nil {
			return fmt.Errorf("rdmacm: accept: %w", err)
		}
	}
	req := abi.UcmAccept{UID: id.uid, ID: id.handle, ConnParam: id.connParam(paramOr(p), lim, retry, rnr)}
	if err := id.do(abi.RDMA_USER_CM_CMD_ACCEPT, ucmd.Bytes(&req), -1, nil); err != nil {
		return fmt.Errorf("rdmacm: accept: %w", err)
	}
	id.iwarpReads(lim.init)
	return nil
}

// iwarpReads tells the QP its initiator depth on iWARP, where the
// kernel moves it to RTS and no MODIFY_QP of ours sets max_rd_atomic, so
// that PostSend refuses reads and atomics on a QP connected with none.
func (id *ID) iwarpReads(depth uint8) {
	if id.qp != nil && id.ps == TCP && id.iwarp() {
		verbs.SetQPReads(id.qp, depth)
	}
}

// completeConnect is the active side's answer to a connect response: RTR,
// RTS, then Establish.
func (id *ID) completeConnect(p *ConnParam) error {
	// The event's values are what the two sides agreed, in our view:
	// our initiator depth lowered to the peer's responder resources and
	// the other way round. 0 is set too: the kernel leaves it out.
	if err := id.toRTS(int(p.ResponderResources), int(p.InitiatorDepth)); err != nil {
		return fmt.Errorf("rdmacm: connect: QP %w", err)
	}
	return id.Establish()
}

// Establish completes the active side's connection (rdma_establish): it
// sends the message that tells the passive side the connection is up. The
// package calls it itself for an ID with a QP from CreateQP; an ID whose
// QP the caller manages gets EventConnectResponse instead of
// EventEstablished, moves the QP to RTR and RTS (see InitQPAttr) and then
// calls Establish.
func (id *ID) Establish() error {
	if id == nil {
		return ErrClosed
	}
	req := abi.UcmAccept{UID: id.uid, ID: id.handle}
	if err := id.do(abi.RDMA_USER_CM_CMD_ACCEPT, ucmd.Bytes(&req), -1, nil); err != nil {
		return fmt.Errorf("rdmacm: establish: %w", err)
	}
	return nil
}

// Reject refuses the connection request that created the ID
// (rdma_reject), with private data for the peer's EventRejected.
func (id *ID) Reject(private []byte) error {
	if id == nil {
		return ErrClosed
	}
	if err := privateLimit("reject", private, abi.CMA_MAX_PRIVATE_DATA_REJ); err != nil {
		return err
	}
	req := abi.UcmReject{ID: id.handle, PrivateDataLen: uint8(len(private))}
	copy(req.PrivateData[:], private)
	if err := id.do(abi.RDMA_USER_CM_CMD_REJECT, ucmd.Bytes(&req), -1, nil); err != nil {
		return fmt.Errorf("rdmacm: reject: %w", err)
	}
	return nil
}

// Disconnect ends the connection (rdma_disconnect): it moves the QP to
// the error state (to SQD on iWARP other than siw, as librdmacm does),
// which flushes its work, and tells the peer. Both sides get
// EventDisconnected.
//
// On siw the QP goes to the error state too, where librdmacm moves it to
// SQD: siw's move from RTS to SQD with nothing being transmitted drops
// the connection without flushing (siw_qp_nextstate_from_rts in
// drivers/infiniband/sw/siw/siw_qp.c), so an RDMA read waiting for its
// response, and requests queued behind a full ORQ, never complete; its
// move to the error state flushes them, and closes the connection through
// the same call as SQD (siw_qp_cm_drop), so the peer sees the same.
// Until Linux 6.12 a link going down moved siw's QPs to the error state
// itself; since then (60dc7fcafea8) a connection that rode out a flap
// keeps its reads outstanding to the disconnect. The kernel's own SQD
// that follows (iw_cm_disconnect) leaves a QP in the error state alone.
// On iWARP hardware (cxgb4) the error state would abort the connection
// with a reset instead of closing it, so it keeps SQD.
func (id *ID) Disconnect() error {
	if id == nil {
		return ErrClosed
	}
	if id.qp != nil {
		state := uverbs.QPSErr
		if id.iwarp() && id.dev.ctx.Device().Driver != uverbs.DriverSIW {
			state = uverbs.QPSSQD
		}
		if err := id.qp.Modify(&uverbs.QPAttr{State: state}, uverbs.QPAttrState); err != nil && !errors.Is(err, uverbs.ErrClosed) {
			return fmt.Errorf("rdmacm: disconnect: %w", err)
		}
	}
	req := abi.UcmDisconnect{ID: id.handle}
	if err := id.do(abi.RDMA_USER_CM_CMD_DISCONNECT, ucmd.Bytes(&req), -1, nil); err != nil {
		return fmt.Errorf("rdmacm: disconnect: %w", err)
	}
	return nil
}

// do runs a command about the ID unless it is closed.
func (id *ID) do(cmd uint32, req []byte, respOff int, resp []byte) error {
	return id.doWith(write, cmd, req, respOff, resp)
}

// doWith is do through w (EventChannel.doWith).
func (id *ID) doWith(w func(fd int, cmd uint32, req []byte, respOff int, resp []byte) error, cmd uint32, req []byte, respOff int, resp []byte) error {
	id.mu.Lock()
	closed := id.closed
	id.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return id.ch.doWith(w, cmd, req, respOff, resp)
}

// Close destroys the ID (rdma_destroy_id) and what CreateQP made for it:
// the QP and the CQs first, then the ID, and for an ID from Dial or
// Listener.Accept, last, its own event channel. It is safe to call more
// than once. A connected ID's peer gets EventDisconnected.
func (id *ID) Close() error {
	if id == nil {
		return ErrClosed
	}
	id.mu.Lock()
	if id.closed {
		id.mu.Unlock()
		return nil
	}
	id.closed = true
	if id.done != nil {
		close(id.done)
	}
	id.mu.Unlock()
	id.detachAll()
	errs := []error{id.destroyQP()}
	req := abi.UcmDestroyID{ID: id.handle}
	var resp abi.UcmDestroyIDResp
	if err := id.ch.do(abi.RDMA_USER_CM_CMD_DESTROY_ID, ucmd.Bytes(&req), 0, ucmd.Bytes(&resp)); err != nil && !errors.Is(err, ErrClosed) {
		errs = append(errs, err)
	}
	id.ch.unregister(id)
	if id.dev != nil {
		id.dev.release()
		id.dev = nil
	}
	if id.ownCh {
		// Last: the ID's events came through it until DESTROY_ID.
		errs = append(errs, id.ch.Close())
	}
	return errors.Join(errs...)
}

// QP returns the ID's queue pair, or nil before CreateQP.
func (id *ID) QP() *uverbs.QP {
	if id == nil {
		return nil
	}
	return id.qp
}

// SendCQ and RecvCQ return the CQs CreateQP made or was given.
func (id *ID) SendCQ() *cq.CQ {
	if id == nil {
		return nil
	}
	return id.own.send
}

// RecvCQ returns the receive CQ of the ID's QP.
func (id *ID) RecvCQ() *cq.CQ {
	if id == nil {
		return nil
	}
	return id.own.recv
}

// alive returns ErrClosed once Close has begun, so that a closed ID
// reports it before anything else about a call.
func (id *ID) alive() error {
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.closed {
		return ErrClosed
	}
	return nil
}

// doneCh returns a channel that Close closes, made on first use: most IDs
// are never waited on.
func (id *ID) doneCh() <-chan struct{} {
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.done == nil {
		id.done = make(chan struct{})
		if id.closed {
			close(id.done)
		}
	}
	return id.done
}

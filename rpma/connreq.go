package rpma

import (
	"context"
	"errors"
	"net/netip"
	"sync/atomic"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// ConnRequest is a connection about to be made (rpma_conn_req): the
// client's, from NewConnRequest, or a server's, from an Endpoint.
type ConnRequest struct {
	peer    *Peer
	ch      *rdmacm.EventChannel // the active side's own; nil on the passive side
	id      *rdmacm.ID
	cfg     *ConnConfig
	cq, rcq *CQ
	shared  *cq.Channel // the channel the CQs share, if they do
	private []byte
	// used is set by Connect and Close, which use the request up, so
	// that its methods answer ErrClosed from then on.
	used atomic.Bool
}

// usable returns the error of a method on a nil or used request.
func (r *ConnRequest) usable(what string) error {
	if r == nil {
		return errNil
	}
	if r.used.Load() {
		return closedErr(what, nil)
	}
	return nil
}

// NewConnRequest resolves addr and prepares a connection to it on the
// peer's device (rpma_conn_req_new); Connect makes it. A nil cfg means
// the defaults.
func (p *Peer) NewConnRequest(ctx context.Context, addr netip.AddrPort, cfg *ConnConfig) (*ConnRequest, error) {
	if err := p.usable("new request"); err != nil {
		return nil, err
	}
	if !addr.Addr().IsValid() || addr.Port() == 0 {
		return nil, inval("connect to %v", addr)
	}
	cfg, err := cfg.orDefault()
	if err != nil {
		return nil, err
	}
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		return nil, provider("event channel", err)
	}
	id, err := ch.CreateID(rdmacm.TCP)
	if err == nil {
		err = id.Resolve(ctx, addr, cfg.Timeout)
	}
	if err != nil {
		ch.Close()
		return nil, provider("new connection request", err)
	}
	r := &ConnRequest{peer: p, ch: ch, id: id, cfg: cfg}
	if err := r.setup(); err != nil {
		ch.Close()
		return nil, err
	}
	return r, nil
}

// setup creates the CQs and the QP of the request, as
// rpma_conn_req_new_from_id does.
func (r *ConnRequest) setup() error {
	ctx, cfg := r.peer.ctx, r.cfg
	if d := r.id.Context(); d == nil || d.Device().Name != ctx.Device().Name {
		return inval("the address is not on the peer's device %s", ctx.Device().Name)
	}
	var srqRCQ *CQ
	if cfg.SRQ != nil {
		srqRCQ = cfg.SRQ.rcq
	}
	if cfg.SharedCompChannel && srqRCQ != nil {
		return inval("a shared completion channel with an SRQ that has its own receive CQ")
	}
	var err error
	if cfg.SharedCompChannel {
		if r.shared, err = cq.NewChannel(ctx); err != nil {
			return provider("completion channel", err)
		}
	}
	if r.cq, err = newCQ(ctx, cfg.CQSize, r.shared); err != nil {
		r.release()
		return err
	}
	if cfg.RCQSize > 0 && srqRCQ == nil {
		if r.rcq, err = newCQ(ctx, cfg.RCQSize, r.shared); err != nil {
			r.release()
			return err
		}
	}
	// The connection's CQs watch its end in Wait.
	r.cq.id = r.id
	if r.rcq != nil {
		r.rcq.id = r.id
	}
	init := uverbs.QPInit{
		SendCQ: r.cq.q,
		RecvCQ: r.cq.q,
		// librpma's QP: one SGE each way, 8 bytes inline for atomic
		// writes.
		Cap: uverbs.QPCap{MaxSendWR: cfg.SQSize, MaxRecvWR: cfg.RQSize, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 8},
	}
	switch {
	case r.rcq != nil:
		init.RecvCQ = r.rcq.q
	case srqRCQ != nil:
		init.RecvCQ = srqRCQ.q
	}
	if cfg.SRQ != nil {
		init.SRQ = cfg.SRQ.srq
	}
	if err := r.id.CreateQP(r.peer.pd, init); err != nil {
		r.release()
		return provider("create QP", err)
	}
	return nil
}

// release destroys the CQs and channel (the QP goes with the ID).
func (r *ConnRequest) release() error {
	err := errors.Join(r.rcq.close(), r.cq.close())
	if r.shared != nil {
		err = errors.Join(err, r.shared.Close())
	}
	r.cq, r.rcq, r.shared = nil, nil, nil
	return err
}

// Recv posts a receive before the connection exists, so that the first
// message has a buffer (rpma_conn_req_recv).
func (r *ConnRequest) Recv(dst *MR, off, n int, opCtx uint64) error {
	if err := r.usable("request recv"); err != nil {
		return err
	}
	if dst == nil {
		return inval("receive without a region")
	}
	return postRecv(r.id.QP(), dst, off, n, opCtx)
}

// PrivateData returns what the client sent with its request (for a
// server's request), or nil (rpma_conn_req_get_private_data).
func (r *ConnRequest) PrivateData() []byte {
	if r == nil {
		return nil
	}
	return r.private
}

// connParam is what librpma connects and accepts with: the device's
// read limits (librdmacm's RDMA_MAX_RESP_RES and RDMA_MAX_INIT_DEPTH,
// which rdmacm lowers on accept to what the request offers), flow
// control and infinite RNR retries.
func (r *ConnRequest) connParam(private []byte) (*rdmacm.ConnParam, error) {
	return &rdmacm.ConnParam{
		PrivateData:        private,
		ResponderResources: rdmacm.MaxResponderResources,
		InitiatorDepth:     rdmacm.MaxInitiatorDepth,
		FlowControl:        1,
		RetryCount:         7,
		RNRRetryCount:      7,
	}, nil
}

// Connect makes the connection: a client's request connects, a server's
// is accepted (rpma_conn_req_connect). The request is used up either way.
// private, at most 56 bytes for a client and 196 for a server, reaches
// the other side's PrivateData. Wait for EventEstablished with
// Conn.NextEvent.
func (r *ConnRequest) Connect(private []byte) (*Conn, error) {
	if r == nil {
		return nil, errNil
	}
	if r.used.Swap(true) {
		return nil, closedErr("connect", nil)
	}
	p, err := r.connParam(private)
	if err != nil {
		r.delete()
		return nil, err
	}
	active := r.ch != nil
	c, err := newConn(r) // on failure it has released the request
	if err != nil {
		return nil, err
	}
	if active {
		err = r.id.Connect(p)
	} else {
		err = r.id.Accept(p)
	}
	if err != nil {
		c.Close()
		return nil, provider("connect", err)
	}
	return c, nil
}

// Close drops the request (rpma_conn_req_delete): a server's is
// rejected, a client's abandoned. On a request that Connect or Close used
// up it does nothing, as rpma_conn_req_delete does with the NULL
// *req_ptr they leave.
func (r *ConnRequest) Close() error {
	if r == nil {
		return errNil
	}
	if r.used.Swap(true) {
		return nil
	}
	return r.delete()
}

// delete releases everything the request holds.
func (r *ConnRequest) delete() error {
	var err error
	if r.ch == nil {
		err = r.id.Reject(nil)
	}
	err = errors.Join(err, r.id.Close(), r.release())
	if r.ch != nil {
		err = errors.Join(err, r.ch.Close())
	}
	return provider("delete request", err)
}

package main

import (
	"context"
	"sync/atomic"

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

// control is struct rping_cb: one connection's resources, and for the
// listener and the client also the CM ID.
type control struct {
	o      *options
	out    *output
	server bool

	state atomic.Int32
	// connResp is set by EventConnectResponse: the client's connection
	// waits for rping (-q) to establish it. iWARP reports EventEstablished
	// instead.
	connResp atomic.Bool
	sem      chan struct{} // sem_t: every post is one token

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

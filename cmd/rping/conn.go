package main

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"github.com/purerdma/purerdma/rdmacm"
)

// resolveTimeout is the 2000 ms rping gives address and route resolution.
const resolveTimeout = 2 * time.Second

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
		cb.connResp.Store(true)
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

// connParam is rping_init_conn_param: one RDMA read each way, 7 retries,
// and with -q the number of rping's QP.
func (cb *control) connParam() rdmacm.ConnParam {
	p := rdmacm.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7}
	if cb.o.selfQP {
		p.QPNum = cb.qp.Num()
	}
	return p
}

// accept is rping_accept. Without -q it is rdma_accept(child, NULL), which
// takes the request's RDMA read limits, capped by the device, and 7
// retries. With -q rping moves its QP to RTS first and accepts with
// rping_init_conn_param's values; Accept leaves that QP alone.
func (cb *control) accept(ctx context.Context) int {
	cb.out.debugf("accepting client connection request\n")
	var p rdmacm.ConnParam
	if cb.o.selfQP {
		if ret, _ := cb.selfModifyQP(cb.child); ret != 0 {
			return ret
		}
		p = cb.connParam()
	} else {
		p = rdmacm.ConnParam{
			ResponderResources: cb.req.ResponderResources,
			InitiatorDepth:     cb.req.InitiatorDepth,
			RetryCount:         7,
			RNRRetryCount:      7,
		}
		if attr, err := cb.child.Context().QueryDevice(); err == nil {
			p.ResponderResources = uint8(min(int(p.ResponderResources), attr.MaxQPRdAtom))
			p.InitiatorDepth = uint8(min(int(p.InitiatorDepth), attr.MaxQPInitRdAtom))
		}
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

// connectClient is rping_connect_client.
func (cb *control) connectClient(ctx context.Context) int {
	p := cb.connParam()
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
	if cb.o.selfQP {
		// The connect response (EventConnectResponse, as the ID has no
		// QP of its own) is rping's to complete: RTR, RTS, then
		// rdma_establish.
		if ret, err := cb.selfModifyQP(cb.cmID); ret != 0 {
			cb.out.perror("rping_modify_qp", err)
			return ret
		}
		// On iWARP the kernel reports EventEstablished instead: the
		// connection is up and the kernel refuses rdma_establish
		// (EINVAL). C calls it anyway and fails there; this port skips
		// it, so that -q works on iWARP too.
		if cb.connResp.Load() {
			if err := cb.cmID.Establish(); err != nil {
				cb.out.perror("rdma_establish", err)
				return -1
			}
		}
	}
	cb.out.debugf("rdma_connect successful\n")
	return 0
}

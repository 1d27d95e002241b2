package rpma

import (
	"context"
	"errors"
	"net/netip"
	"sync/atomic"

	"github.com/purerdma/purerdma/rdmacm"
)

// Endpoint listens for connections (rpma_ep).
type Endpoint struct {
	peer *Peer
	ch   *rdmacm.EventChannel
	id   *rdmacm.ID
	// closed makes the methods of a closed endpoint answer ErrClosed
	// before they look at their arguments.
	closed atomic.Bool
}

// usable returns the error of a method on a nil or closed endpoint.
func (e *Endpoint) usable(what string) error {
	if e == nil {
		return errNil
	}
	if e.closed.Load() {
		return closedErr(what, nil)
	}
	return nil
}

// Listen listens on addr, an address of the peer's device
// (rpma_ep_listen).
func (p *Peer) Listen(addr netip.AddrPort) (*Endpoint, error) {
	if err := p.usable("listen"); err != nil {
		return nil, err
	}
	if !addr.Addr().IsValid() {
		return nil, inval("listen without an address")
	}
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		return nil, provider("event channel", err)
	}
	id, err := ch.CreateID(rdmacm.TCP)
	if err == nil {
		err = id.Bind(addr)
	}
	if err == nil {
		err = id.Listen(0)
	}
	if err != nil {
		ch.Close()
		return nil, provider("listen", err)
	}
	return &Endpoint{peer: p, ch: ch, id: id}, nil
}

// Addr returns the address the endpoint listens on, with the port the
// kernel chose if it was 0.
func (e *Endpoint) Addr() (netip.AddrPort, error) {
	if err := e.usable("endpoint address"); err != nil {
		return netip.AddrPort{}, err
	}
	a, err := e.id.LocalAddr()
	return a, provider("endpoint address", err)
}

// Fd returns the file descriptor of the endpoint's event channel
// (rpma_ep_get_fd); it becomes readable when a request arrives.
func (e *Endpoint) Fd() int {
	if e == nil {
		return -1
	}
	return e.ch.Fd()
}

// NextConnRequest waits for the next connection request and prepares it
// with cfg (nil for the defaults) (rpma_ep_next_conn_req).
func (e *Endpoint) NextConnRequest(ctx context.Context, cfg *ConnConfig) (*ConnRequest, error) {
	if err := e.usable("next request"); err != nil {
		return nil, err
	}
	ev, err := e.id.WaitEvent(ctx, rdmacm.EventConnectRequest)
	if ev != nil && err != nil {
		// Another event on a listener: librpma's INVAL.
		return nil, inval("%v", err)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, provider("next request", err)
	}
	return e.request(ev, cfg)
}

// TryNextConnRequest returns a request if one is pending, and ErrNoEvent
// otherwise: rpma_ep_next_conn_req on a non-blocking fd.
func (e *Endpoint) TryNextConnRequest(cfg *ConnConfig) (*ConnRequest, error) {
	if err := e.usable("next request"); err != nil {
		return nil, err
	}
	ev, err := e.ch.TryGetEvent()
	if errors.Is(err, rdmacm.ErrNoEvent) {
		return nil, ErrNoEvent
	}
	if err != nil {
		return nil, provider("next request", err)
	}
	if ev.Type != rdmacm.EventConnectRequest {
		return nil, inval("%s on a listener", ev.Type)
	}
	return e.request(ev, cfg)
}

func (e *Endpoint) request(ev *rdmacm.Event, cfg *ConnConfig) (*ConnRequest, error) {
	cfg, err := cfg.orDefault()
	if err != nil {
		ev.ID.Reject(nil)
		ev.ID.Close()
		return nil, err
	}
	r := &ConnRequest{peer: e.peer, id: ev.ID, cfg: cfg, private: ev.Param.PrivateData}
	if err := r.setup(); err != nil {
		ev.ID.Reject(nil)
		ev.ID.Close()
		return nil, err
	}
	return r, nil
}

// Close stops listening and closes the endpoint (rpma_ep_shutdown).
// Closing it again does nothing, as rpma_ep_shutdown does with a NULL
// *ep_ptr.
func (e *Endpoint) Close() error {
	if e == nil {
		return errNil
	}
	if e.closed.Swap(true) {
		return nil
	}
	return provider("shutdown", e.ch.Close())
}

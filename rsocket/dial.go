package rsocket

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/purerdma/purerdma/internal/verbs"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// Options tune a connection; the zero value is rsocket.c's defaults,
// except that keepalives are on (every DefaultKeepAlive, as Go's
// net.Dialer does for TCP). Both sides choose their own sizes: each
// announces its receive buffer and queue to the other in the connection
// data.
type Options struct {
	// SendBuffer and RecvBuffer are the sizes in bytes of the send ring
	// and of the receive buffer the peer writes into (rsocket.c's sbuf
	// and rbuf; SO_SNDBUF/SO_RCVBUF there set twice their value).
	// Default 128 KiB each, at least 4 KiB.
	SendBuffer, RecvBuffer int
	// SendQueue and RecvQueue are the QP's work request counts, clamped
	// to 16..the device's limit. Default 384.
	SendQueue, RecvQueue int
	// Inline is the largest write sent inline (RDMA_INLINE). Default 64;
	// a negative value is 0.
	Inline int
	// KeepAlive is the interval of keepalives: zero-length RDMA writes
	// (RS_CTRL_KEEPALIVE, rsocket.c's SO_KEEPALIVE) that the peer, C or
	// Go, never sees; they keep a send outstanding on an idle connection.
	// Zero means DefaultKeepAlive (15s); a negative value turns them off,
	// as for net.Dialer.
	//
	// A keepalive only sends: a dead peer is noticed when a send (the
	// keepalive or any other) fails, or by UserTimeout. A send fails
	// when the transport gives up: on InfiniBand and RoCE hardware after
	// the QP's retries (retry_count 7, each after the path's ack
	// timeout); on iWARP (siw) when TCP does (a reset at once, or
	// retransmissions for tcp_retries2, some 15 minutes). rxe takes
	// retry_count 7 as "retry forever", so on rxe a peer that vanished
	// without a disconnect (a crashed host, a QP in error) is found only
	// by UserTimeout. A peer process that dies is found without either:
	// its kernel disconnects the connection, and Read and Write fail
	// with an error matching syscall.ECONNRESET.
	KeepAlive time.Duration
	// UserTimeout, when positive, bounds how long sends may stay
	// unacknowledged, as TCP_USER_TIMEOUT does: when work is outstanding
	// on the send queue and none of it completes for this long, the
	// connection fails with an error matching syscall.ETIMEDOUT, and
	// blocked Reads and Writes return it. Zero, the default, leaves it to
	// the QP's retries, as rsocket.c does (see KeepAlive). With
	// keepalives on, a peer that vanished is found within about
	// KeepAlive+UserTimeout (plus UserTimeout/4, the check's period)
	// whatever the transport does, even on an idle connection.
	UserTimeout time.Duration
	// ResolveTimeout bounds address and route resolution. Default 2s.
	ResolveTimeout time.Duration
}

func pos(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// Buffers are at least two low-water marks, as rsocket.c demands of sbuf.
func (o *Options) sendBuffer() int { return max(pos(o.SendBuffer, defWMem), 2*sndLowat) &^ 1 }
func (o *Options) recvBuffer() int { return max(pos(o.RecvBuffer, defMem), 2*sndLowat) &^ 1 }
func (o *Options) sendQueue() int  { return pos(o.SendQueue, defSQSize) }
func (o *Options) recvQueue() int  { return pos(o.RecvQueue, defRQSize) }
func (o *Options) inline() int {
	switch {
	case o.Inline < 0:
		return 0
	case o.Inline == 0:
		return defInline
	}
	return o.Inline
}

// DefaultKeepAlive is the keepalive interval of the zero Options, as Go's
// net.Dialer's default for TCP.
const DefaultKeepAlive = 15 * time.Second

// keepAlive is the keepalive interval; 0 means none.
func (o *Options) keepAlive() time.Duration {
	switch {
	case o.KeepAlive < 0:
		return 0
	case o.KeepAlive == 0:
		return DefaultKeepAlive
	}
	return o.KeepAlive
}

// userTimeout is the user timeout and its check's period; 0, 0 for none.
func (o *Options) userTimeout() (limit, tick time.Duration) {
	if o.UserTimeout <= 0 {
		return 0, 0
	}
	return o.UserTimeout, max(o.UserTimeout/4, 10*time.Millisecond)
}

func (o *Options) resolveTimeout() time.Duration {
	if o.ResolveTimeout <= 0 {
		return 2 * time.Second
	}
	return o.ResolveTimeout
}

// ErrNetwork is returned for a network other than "rdma", "rdma4" and
// "rdma6". A network name is an argument the caller got wrong, so it is a
// kind of uverbs.ErrInvalid and matches syscall.EINVAL.
var ErrNetwork = verbs.NewSentinel("unknown network", uverbs.ErrInvalid)

// errClosed is what a closed (or nil) Conn or Listener returns. It
// matches net.ErrClosed, as every net.Conn's does, so that net/http and
// friends see a closed connection; and uverbs.ErrClosed (syscall.EBADF), as
// every other purerdma object's does. Its text is net.ErrClosed's.
var errClosed error = closedError{}

type closedError struct{}

func (closedError) Error() string   { return net.ErrClosed.Error() }
func (closedError) Unwrap() []error { return []error{net.ErrClosed, uverbs.ErrClosed} }

func resolve(ctx context.Context, network, addr string) (netip.AddrPort, error) {
	var fam string
	switch network {
	case "rdma":
		fam = "ip"
	case "rdma4":
		fam = "ip4"
	case "rdma6":
		fam = "ip6"
	default:
		return netip.AddrPort{}, fmt.Errorf("rsocket: %w %q", ErrNetwork, network)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return netip.AddrPort{}, err
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("rsocket: port %q: %w", port, err)
	}
	if host == "" {
		if fam == "ip6" {
			return netip.AddrPortFrom(netip.IPv6Unspecified(), uint16(p)), nil
		}
		return netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(p)), nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return netip.AddrPortFrom(a.Unmap(), uint16(p)), nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, fam, host)
	if err != nil {
		return netip.AddrPort{}, err
	}
	return netip.AddrPortFrom(ips[0].Unmap(), uint16(p)), nil
}

// Dial connects to addr ("host:port") on network "rdma" (or "rdma4",
// "rdma6") with the default Options.
func Dial(ctx context.Context, network, addr string) (*Conn, error) {
	var o Options
	return o.Dial(ctx, network, addr)
}

// Dial connects to addr as rconnect does: it resolves the address and the
// route through the RDMA CM, creates the QP and buffers, and exchanges
// connection data with the peer. ctx bounds the whole connection set-up.
func (o *Options) Dial(ctx context.Context, network, addr string) (*Conn, error) {
	dst, err := resolve(ctx, network, addr)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	c, err := o.dial(ctx, dst)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Addr: Addr{dst}, Err: err}
	}
	c.network = network
	return c, nil
}

func (o *Options) dial(ctx context.Context, dst netip.AddrPort) (*Conn, error) {
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		return nil, err
	}
	id, err := ch.CreateID(rdmacm.TCP)
	if err != nil {
		ch.Close()
		return nil, err
	}
	if err := id.Resolve(ctx, dst, o.resolveTimeout()); err != nil {
		ch.Close()
		return nil, err
	}
	c, err := newConn(id, ch, o)
	if err != nil {
		return nil, err
	}
	p := rdmacm.ConnParam{PrivateData: c.connData(), FlowControl: 1, RetryCount: 7, RNRRetryCount: 7}
	if c.msgMode {
		// rsocket.c: "iWarp issues RDMA read during connection".
		p.InitiatorDepth = 1
	}
	if err := id.Connect(&p); err != nil {
		c.release()
		return nil, err
	}
	ev, err := id.WaitEvent(ctx, rdmacm.EventEstablished)
	if err != nil {
		c.release()
		return nil, err
	}
	d, err := parseConnData(ev.Param.PrivateData)
	if err != nil {
		id.Disconnect()
		c.release()
		return nil, err
	}
	c.start(d)
	if c.msgMode {
		// A passive siw leaves an FPDU that arrives between its MPA
		// reply and taking the socket over for the QP unread until more
		// data comes, and our first credit update can arrive just then.
		// A zero-length RDMA write a little later (a keepalive: the peer
		// sees nothing) is that data.
		c.mu.Lock()
		c.holdTimer = time.AfterFunc(kickDelay, c.kick)
		c.mu.Unlock()
	}
	return c, nil
}

// Listener accepts rsocket connections. It implements net.Listener.
type Listener struct {
	opts   Options
	ch     *rdmacm.EventChannel
	id     *rdmacm.ID
	addr   Addr
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex // one Accept at a time
	once   sync.Once
	optsMu sync.Mutex
}

// SetOptions sets the options of the connections accepted from now on,
// as setsockopt on a listening rsocket does for the sockets it accepts.
func (l *Listener) SetOptions(o Options) {
	if l == nil {
		return
	}
	l.optsMu.Lock()
	l.opts = o
	l.optsMu.Unlock()
}

// Listen listens on addr ("host:port"; an empty host or port 0 as for
// net.Listen) with the default Options.
func Listen(network, addr string) (*Listener, error) {
	var o Options
	return o.Listen(network, addr)
}

// Listen listens on addr; accepted connections use o.
func (o *Options) Listen(network, addr string) (*Listener, error) {
	a, err := resolve(context.Background(), network, addr)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	l, err := o.listen(a)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Addr: Addr{a}, Err: err}
	}
	return l, nil
}

func (o *Options) listen(a netip.AddrPort) (*Listener, error) {
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		return nil, err
	}
	id, err := ch.CreateID(rdmacm.TCP)
	if err == nil {
		err = id.SetReuseAddr(true) // as rstream's SO_REUSEADDR
	}
	if err == nil {
		err = id.Bind(a)
	}
	if err == nil {
		err = id.Listen(0)
	}
	if err == nil {
		a, err = id.LocalAddr()
	}
	if err != nil {
		ch.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Listener{opts: *o, ch: ch, id: id, addr: Addr{a}, ctx: ctx, cancel: cancel}, nil
}

// acceptTimeout bounds the wait for a connection's establishment.
const acceptTimeout = 10 * time.Second

// Accept waits for a connection request, answers it (raccept) and
// returns the connection once established. Requests with bad connection
// data are rejected and Accept waits for the next.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.AcceptRsocket()
	if err != nil {
		return nil, err // not a non-nil net.Conn holding a nil *Conn
	}
	return c, nil
}

// AcceptRsocket is Accept returning the concrete *Conn.
func (l *Listener) AcceptRsocket() (*Conn, error) {
	if l == nil {
		return nil, errClosed
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		ev, err := l.id.WaitEvent(l.ctx, rdmacm.EventConnectRequest)
		if err != nil {
			if l.ctx.Err() != nil {
				err = errClosed
			}
			return nil, &net.OpError{Op: "accept", Net: "rdma", Addr: l.addr, Err: err}
		}
		c, err := l.accept(ev)
		if err == nil {
			return c, nil
		}
		if l.ctx.Err() != nil {
			return nil, &net.OpError{Op: "accept", Net: "rdma", Addr: l.addr, Err: errClosed}
		}
		var unexpected *rdmacm.UnexpectedEventError
		if errors.As(err, &unexpected) || errors.Is(err, ErrProtocol) || errors.Is(err, context.DeadlineExceeded) {
			continue // this request failed; the listener is fine
		}
		return nil, &net.OpError{Op: "accept", Net: "rdma", Addr: l.addr, Err: err}
	}
}

func (l *Listener) accept(ev *rdmacm.Event) (*Conn, error) {
	id := ev.ID
	d, err := parseConnData(ev.Param.PrivateData)
	if err != nil {
		id.Reject(nil)
		id.Close()
		return nil, err
	}
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		id.Reject(nil)
		id.Close()
		return nil, err
	}
	if err := id.Migrate(ch); err != nil {
		id.Reject(nil)
		id.Close()
		ch.Close()
		return nil, err
	}
	l.optsMu.Lock()
	o := l.opts
	l.optsMu.Unlock()
	c, err := newConn(id, ch, &o)
	if err != nil {
		id.Reject(nil)
		ch.Close()
		return nil, err
	}
	p := ev.Param
	p.PrivateData = c.connData()
	p.QPNum = 0
	p.SRQ = false
	if err := id.Accept(&p); err != nil {
		c.release()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(l.ctx, acceptTimeout)
	_, err = id.WaitEvent(ctx, rdmacm.EventEstablished)
	cancel()
	if err != nil {
		c.release()
		return nil, err
	}
	// On iWARP, the active side's siw takes anything that follows the
	// MPA reply on the stream before it moved its QP to RTS for a
	// protocol error ("peer sent extra data") and fails the connect with
	// EINVAL (Linux 6.12 hit it in one connect of ten). So the passive
	// side sends nothing until the peer's first message (its credit
	// update, sent at once) shows it is up, or holdTimeout passed: the
	// passive siw associates the socket with the QP only after sending
	// its reply, and a message that arrived in between waits in the
	// socket until more data comes.
	c.holdSend = c.msgMode
	c.start(d)
	if c.msgMode {
		c.mu.Lock()
		c.holdUntil = time.Now().Add(holdTimeout)
		c.holdTimer = time.AfterFunc(holdTimeout, c.endHold)
		c.mu.Unlock()
	}
	return c, nil
}

// Close stops listening; a blocked Accept returns an error matching
// net.ErrClosed.
func (l *Listener) Close() error {
	if l == nil {
		return errClosed
	}
	err := errClosed
	l.once.Do(func() {
		l.cancel()
		l.mu.Lock()
		defer l.mu.Unlock()
		err = l.ch.Close()
	})
	return err
}

// Addr returns the address the listener is bound to.
func (l *Listener) Addr() net.Addr {
	if l == nil {
		return nil
	}
	return l.addr
}

package rdmacm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/purerdma/purerdma/uverbs"
)

// DefaultResolveTimeout is how long Resolve, and so Dial, give each of
// address and route resolution when no timeout is given: librdmacm's
// examples' usual 2 s.
const DefaultResolveTimeout = 2 * time.Second

// Resolve resolves dst to an RDMA address and a route to it, waiting for
// each step (rdma_resolve_addr, then rdma_resolve_route, each followed by
// its event); afterwards the ID is bound to the device that reaches dst
// and ready for CreateQP and Connect. Each step may take timeout in the
// kernel (DefaultResolveTimeout when 0 or less) and ctx bounds both. The
// error names the step that failed; a failed step's event is matched by
// the error (errors.As with *UnexpectedEventError, and its errno).
func (id *ID) Resolve(ctx context.Context, dst netip.AddrPort, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = DefaultResolveTimeout
	}
	if err := id.ResolveAddr(netip.AddrPort{}, dst, timeout); err != nil {
		return err
	}
	if _, err := id.WaitEvent(ctx, EventAddrResolved); err != nil {
		return stepErr("resolve "+dst.String(), err)
	}
	if err := id.ResolveRoute(timeout); err != nil {
		return err
	}
	if _, err := id.WaitEvent(ctx, EventRouteResolved); err != nil {
		return stepErr("resolve route to "+dst.String(), err)
	}
	return nil
}

// stepError is err with the step that failed in front of its text,
// without a second "rdmacm: ".
type stepError struct {
	step string
	err  error
}

func (e *stepError) Error() string {
	return "rdmacm: " + e.step + ": " + strings.TrimPrefix(e.err.Error(), "rdmacm: ")
}

func (e *stepError) Unwrap() error { return e.err }

func stepErr(step string, err error) error { return &stepError{step, err} }

// Config holds the settings of Dial, Listen and Accept. Its zero value
// works: a reliable connection (the TCP port space, an RC QP) with
// librdmacm's defaults.
type Config struct {
	// QPCap sizes the QP and its CQs. A zero field takes its default:
	// 16 send and 16 receive work requests, 1 scatter/gather entry each;
	// MaxInlineData 0 means no inline data.
	QPCap uverbs.QPCap
	// Param is sent with Connect (Dial) or Accept. nil means librdmacm's
	// NULL: the device's most RDMA reads and atomics each way (lowered
	// to the request's by Accept) and 7 transport and 7 RNR retries; see
	// ConnParam, where 0 means none.
	Param *ConnParam
	// PrivateData, when Param is nil, is sent with Connect or Accept
	// along with the defaults of a nil Param: a server hands out, say, a
	// region's address and rkey with it (see ID.PrivateData). With a
	// Param, its own PrivateData is sent and this one is unused.
	PrivateData []byte
	// ResolveTimeout is how long address and route resolution may each
	// take in the kernel; 0 means DefaultResolveTimeout.
	ResolveTimeout time.Duration
	// Resolver looks host names up; nil means net.DefaultResolver.
	Resolver *net.Resolver
	// Backlog is Listen's queue of connection requests; 0 means the
	// kernel's default.
	Backlog int
}

// qpCap is c.QPCap with the defaults filled in.
func (c *Config) qpCap() uverbs.QPCap {
	q := c.QPCap
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&q.MaxSendWR, 16)
	def(&q.MaxRecvWR, 16)
	def(&q.MaxSendSGE, 1)
	def(&q.MaxRecvSGE, 1)
	return q
}

// param is what Connect and Accept get.
func (c *Config) param() *ConnParam {
	if c.Param != nil || len(c.PrivateData) == 0 {
		return c.Param
	}
	// What a nil ConnParam means, with the private data.
	return &ConnParam{
		PrivateData:        c.PrivateData,
		ResponderResources: MaxResponderResources,
		InitiatorDepth:     MaxInitiatorDepth,
		RetryCount:         7,
		RNRRetryCount:      7,
	}
}

func (c *Config) resolver() *net.Resolver {
	if c.Resolver != nil {
		return c.Resolver
	}
	return net.DefaultResolver
}

// lookup resolves address, "host:port", to the addresses to try in
// order. An empty host is an error for Dial (listen false) and every
// IPv4 address for Listen.
func (c *Config) lookup(ctx context.Context, address string, listen bool) ([]netip.AddrPort, error) {
	host, service, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, uverbs.ErrInvalid)
	}
	port, err := c.resolver().LookupPort(ctx, "tcp", service)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", service, err)
	}
	if port == 0 && !listen {
		return nil, fmt.Errorf("address %s: missing port: %w", address, uverbs.ErrInvalid)
	}
	if host == "" {
		if !listen {
			return nil, fmt.Errorf("address %s: missing host: %w", address, uverbs.ErrInvalid)
		}
		return []netip.AddrPort{netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(port))}, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.AddrPort{netip.AddrPortFrom(a.Unmap(), uint16(port))}, nil
	}
	addrs, err := c.resolver().LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]netip.AddrPort, len(addrs))
	for i, a := range addrs {
		out[i] = netip.AddrPortFrom(a.Unmap(), uint16(port))
	}
	return out, nil
}

// Dial connects to address with the zero Config; see Config.Dial.
func Dial(ctx context.Context, address string) (*ID, error) {
	var c Config
	return c.Dial(ctx, address)
}

// Dial connects to address, "host:port" (an IPv6 literal in brackets),
// and returns the connected ID, on an event channel of its own, with an
// RC QP and a send and a receive CQ (GetSendComp, GetRecvComp); its PD
// is ID.PD, and ID.PrivateData is what the server accepted with. It is
// librdmacm's rdma_create_ep and rdma_connect in one call: it looks the
// host up, then for each address in turn, as net.Dialer does, resolves
// it, creates the QP and connects, until one connects; the error is the
// first address's. ctx bounds the whole call. ID.Close destroys the QP
// and CQs, the ID and its channel.
func (c *Config) Dial(ctx context.Context, address string) (*ID, error) {
	addrs, err := c.lookup(ctx, address, false)
	if err != nil {
		return nil, fmt.Errorf("rdmacm: dial %s: %w", address, err)
	}
	var first error
	for _, a := range addrs {
		id, err := c.dial(ctx, a)
		if err == nil {
			return id, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, stepErr("dial "+address, first)
}

func (c *Config) dial(ctx context.Context, dst netip.AddrPort) (*ID, error) {
	id, err := newOwnID()
	if err != nil {
		return nil, err
	}
	if err := c.connect(ctx, id, dst); err != nil {
		id.Close()
		return nil, err
	}
	return id, nil
}

func (c *Config) connect(ctx context.Context, id *ID, dst netip.AddrPort) error {
	if err := id.Resolve(ctx, dst, c.ResolveTimeout); err != nil {
		return err
	}
	if err := id.CreateQP(nil, uverbs.QPInit{Cap: c.qpCap()}); err != nil {
		return err
	}
	if err := id.Connect(c.param()); err != nil {
		return err
	}
	ev, err := id.WaitEvent(ctx, EventEstablished)
	if err != nil {
		return stepErr("connect to "+dst.String(), err)
	}
	id.setPrivate(ev.Param.PrivateData)
	return nil
}

// newOwnID creates an ID in the TCP port space on a channel of its own,
// which the ID's Close closes.
func newOwnID() (*ID, error) {
	ch, err := NewEventChannel()
	if err != nil {
		return nil, err
	}
	id, err := ch.CreateID(TCP)
	if err != nil {
		ch.Close()
		return nil, err
	}
	id.ownCh = true
	return id, nil
}

// PrivateData returns the private data the peer sent when the connection
// was set up: the server's accept for an ID from Dial, the client's
// connect for one from Listener.Accept; nil for other IDs. InfiniBand and
// RoCE carry a fixed size, so it may be longer than what the peer sent,
// padded with zeros. The slice is the ID's; do not modify it.
func (id *ID) PrivateData() []byte {
	if id == nil {
		return nil
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	return id.private
}

func (id *ID) setPrivate(b []byte) {
	id.mu.Lock()
	defer id.mu.Unlock()
	id.private = b
}

// Listener is a listening ID on a channel of its own, from Listen.
type Listener struct {
	id   *ID
	addr netip.AddrPort
	cfg  Config

	mu      sync.Mutex
	private []byte // SetPrivateData's
	set     bool
}

// Listen listens on address with the zero Config; see Config.Listen.
func Listen(address string) (*Listener, error) {
	var c Config
	return c.Listen(address)
}

// Listen binds an ID to address, "host:port", and listens for
// connections (rdma_bind_addr and rdma_listen). An empty host listens on
// every IPv4 address, port 0 (or none) on a port the kernel picks
// (Listener.Addr says which); a host name listens on its first address.
// An address of an RDMA device binds the listener to that device.
func (c *Config) Listen(address string) (*Listener, error) {
	addrs, err := c.lookup(context.Background(), address, true)
	if err != nil {
		return nil, fmt.Errorf("rdmacm: listen %s: %w", address, err)
	}
	id, err := newOwnID()
	if err != nil {
		return nil, err
	}
	if err := id.Bind(addrs[0]); err != nil {
		id.Close()
		return nil, err
	}
	if err := id.Listen(c.Backlog); err != nil {
		id.Close()
		return nil, err
	}
	a, err := id.LocalAddr()
	if err != nil {
		id.Close()
		return nil, err
	}
	return &Listener{id: id, addr: a, cfg: *c}, nil
}

// Addr returns the address the listener is bound to, with the port the
// kernel picked for port 0.
func (l *Listener) Addr() netip.AddrPort {
	if l == nil {
		return netip.AddrPort{}
	}
	return l.addr
}

// PD returns the protection domain of the device the listener is bound
// to, which the IDs Accept returns share: memory registered in it before
// a connection exists may be handed out with SetPrivateData. It is nil
// for a listener on every address, which no device has.
func (l *Listener) PD() *uverbs.PD {
	if l == nil {
		return nil
	}
	return l.id.PD()
}

// SetPrivateData replaces the Config's PrivateData for the Accepts that
// follow, so that a server can listen, register memory in PD and then
// hand out its address and rkey. Like Config.PrivateData it is unused
// when the Config has a Param. The slice is kept; do not modify it.
func (l *Listener) SetPrivateData(b []byte) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.private, l.set = b, true
}

// param is what Accept sends: the Config's, with SetPrivateData's data.
func (l *Listener) param() *ConnParam {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.cfg
	if l.set {
		c.PrivateData = l.private
	}
	return c.param()
}

// Close stops listening and closes the listener's channel. The IDs that
// Accept returned stay connected. It is safe to call more than once.
func (l *Listener) Close() error {
	if l == nil {
		return ErrClosed
	}
	return l.id.Close()
}

// Accept waits for the next connection request and returns its ID,
// connected, on an event channel of its own, with an RC QP and a send and
// a receive CQ, as Dial's; ID.PrivateData is the client's. It accepts
// with the Config's Param or PrivateData (a server hands out a region's
// address and rkey so), and returns once the connection is established.
//
// A request that fails on the way (the QP cannot be created, the client
// gives up or goes before the connection is established) is rejected or
// dropped and Accept goes on with the next one: one client's failure
// does not end a server's accept loop. Accept returns an error when ctx
// ends, the listener is closed (ErrClosed), an event other than a request
// comes for it (its device was removed: EventDeviceRemoval), or reading
// the channel fails (a request whose device could not be opened, which
// was rejected); the listener stays usable unless it was closed.
func (l *Listener) Accept(ctx context.Context) (*ID, error) {
	if l == nil {
		return nil, ErrClosed
	}
	for {
		ev, err := l.id.WaitEvent(ctx, EventConnectRequest)
		var ue *UnexpectedEventError
		switch {
		case errors.As(err, &ue) && ue.Event.Type == EventAddrChange:
			continue // the listener's address moved; it still listens
		case err != nil:
			return nil, stepErr("accept", err)
		}
		id, err := l.setup(ctx, ev)
		if err == nil {
			return id, nil
		}
		if ctx.Err() != nil {
			return nil, stepErr("accept", ctx.Err())
		}
	}
}

// setup takes the request's new ID onto a channel of its own, creates
// its QP, accepts and waits for the connection; on failure it rejects
// the request and destroys the ID.
func (l *Listener) setup(ctx context.Context, ev *Event) (*ID, error) {
	id := ev.ID
	fail := func(err error) (*ID, error) {
		id.Reject(nil)
		id.Close()
		return nil, err
	}
	ch, err := NewEventChannel()
	if err != nil {
		return fail(err)
	}
	if err := id.Migrate(ch); err != nil {
		ch.Close()
		return fail(err)
	}
	id.ownCh = true
	if err := id.CreateQP(nil, uverbs.QPInit{Cap: l.cfg.qpCap()}); err != nil {
		return fail(err)
	}
	if err := id.Accept(l.param()); err != nil {
		return fail(err)
	}
	if _, err := id.WaitEvent(ctx, EventEstablished); err != nil {
		id.Close()
		return nil, err
	}
	id.setPrivate(ev.Param.PrivateData)
	return id, nil
}

package rpma

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"syscall"

	"github.com/purerdma/purerdma/uverbs"
)

// DialOptions configure Dial. The zero value, and a nil *DialOptions,
// connect with librpma's defaults.
type DialOptions struct {
	// Conn configures the connection; each field left 0 means its
	// default (see ConnConfig), except CQSize: 0 means room for every
	// send and receive (SQSize+RQSize, or SQSize with a receive CQ), so
	// that a connection used with Do and a Messenger, whose sends and
	// receives share the CQ, never overflows it.
	Conn ConnConfig
	// Peer are the choices librpma makes when it is built; the zero
	// value is librpma 1.3's.
	Peer PeerOptions
	// PrivateData goes to the server with the connection request (at
	// most 56 bytes): the server's Conn.PrivateData.
	PrivateData []byte
}

// Client is a connection made by Dial, with the device and Peer it is
// on. Close releases all of it.
type Client struct {
	dev    *uverbs.Context
	peer   *Peer
	conn   *Conn
	remote *RemoteMR
	once   sync.Once
	err    error
}

// Dial connects to the server at address, "host:port", and waits until
// the connection is established: the one-call form of ContextByAddr,
// NewPeer, NewConnRequest, Connect and NextEvent. host is an IPv4 or IPv6
// address or a name, which is resolved; the addresses are tried in turn
// until one connects. When the server accepts with a region's descriptor
// as private data, as a Listener with a region does and librpma's
// examples do, Remote returns that region.
//
// Dial's errors are ErrInvalid for an address it cannot parse, and
// ErrProvider for a name that does not resolve, an address no RDMA
// device reaches, or a connection that fails: wrapping ECONNREFUSED when
// the server rejects it, EHOSTUNREACH when it is unreachable.
func Dial(ctx context.Context, address string, opts *DialOptions) (*Client, error) {
	if opts == nil {
		opts = &DialOptions{}
	}
	addrs, err := resolveAddress(ctx, address, false)
	if err != nil {
		return nil, err
	}
	var first error
	for _, a := range addrs {
		c, err := dialAddr(ctx, a, opts)
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

func dialAddr(ctx context.Context, addr netip.AddrPort, opts *DialOptions) (*Client, error) {
	cfg := oneCallConfig(opts.Conn)
	c := &Client{}
	var err error
	if c.dev, err = ContextByAddr(ctx, addr.Addr(), ContextRemote); err != nil {
		return nil, err
	}
	fail := func(err error) (*Client, error) {
		c.Close()
		return nil, err
	}
	if c.peer, err = NewPeerWithOptions(c.dev, opts.Peer); err != nil {
		return fail(err)
	}
	req, err := c.peer.NewConnRequest(ctx, addr, &cfg)
	if err != nil {
		return fail(err)
	}
	if c.conn, err = req.Connect(opts.PrivateData); err != nil {
		return fail(err)
	}
	if err := c.conn.established(ctx, "connect to "+addr.String()); err != nil {
		return fail(err)
	}
	if r, err := RemoteMRFromDescriptor(c.conn.PrivateData()); err == nil {
		c.remote = r
	}
	return c, nil
}

// oneCallConfig is the ConnConfig of Dial and Listen: CQSize 0 makes the
// CQ as large as the queues that complete on it.
func oneCallConfig(c ConnConfig) ConnConfig {
	if c.CQSize == 0 {
		c.CQSize = c.SQSize
		if c.CQSize == 0 {
			c.CQSize = DefaultQueueSize
		}
		if c.RCQSize == 0 && c.SRQ == nil {
			c.CQSize += max(c.RQSize, 0)
			if c.RQSize == 0 {
				c.CQSize += DefaultQueueSize
			}
		}
	}
	return c
}

// established waits for the connection's first event, which must say
// it is established.
func (c *Conn) established(ctx context.Context, what string) error {
	ev, err := c.NextEvent(ctx)
	if err != nil {
		return err
	}
	var errno syscall.Errno
	switch ev {
	case ConnEstablished:
		return nil
	case ConnRejected:
		errno = syscall.ECONNREFUSED
	case ConnUnreachable:
		errno = syscall.EHOSTUNREACH
	case ConnClosed:
		errno = syscall.ECONNRESET
	default:
		errno = syscall.ECONNABORTED
	}
	return &rpmaError{"rpma: " + what + ": " + ev.String(), ErrProvider, errno}
}

// Conn returns the connection.
func (c *Client) Conn() *Conn {
	if c == nil {
		return nil
	}
	return c.conn
}

// Peer returns the Peer the connection is on: in librpma's words the
// local RDMA device, with its protection domain. Register memory for the
// connection with it (AllocMR, RegisterMR).
func (c *Client) Peer() *Peer {
	if c == nil {
		return nil
	}
	return c.peer
}

// Remote returns the server's region whose descriptor came with its
// accept, or nil when the server sent none.
func (c *Client) Remote() *RemoteMR {
	if c == nil {
		return nil
	}
	return c.remote
}

// Close disconnects and releases everything Dial made, in the order the
// device needs: the connection, the regions AllocMR made on the peer
// that are still open, the peer and the device. Regions registered with
// RegisterMR must be closed first. Closing it again does nothing and
// returns the first Close's error.
func (c *Client) Close() error {
	if c == nil {
		return errNil
	}
	c.once.Do(func() {
		var errs []error
		if c.conn != nil {
			c.conn.Disconnect() // best effort: the peer may be gone
			errs = append(errs, c.conn.Close())
		}
		errs = append(errs, closePeer(c.peer, c.dev))
		c.err = errors.Join(errs...)
	})
	return c.err
}

// closePeer closes the regions AllocMR made on p, p, and dev.
func closePeer(p *Peer, dev *uverbs.Context) error {
	var errs []error
	if p != nil {
		errs = append(errs, p.closeAllocated(), p.Close())
	}
	if dev != nil {
		errs = append(errs, provider("close device", dev.Close()))
	}
	return errors.Join(errs...)
}

// ListenOptions configure Listen. The zero value, and a nil
// *ListenOptions, listen with librpma's defaults and expose no region.
type ListenOptions struct {
	// Conn configures every connection Accept makes, as
	// DialOptions.Conn does.
	Conn ConnConfig
	// Peer are the choices librpma makes when it is built.
	Peer PeerOptions
	// Region, when not 0, is the size of a region Listen allocates
	// and registers (Peer.AllocMR) with RegionUsage, and whose
	// descriptor it sends with every accept, for the clients'
	// Client.Remote. Listener.Region returns it.
	Region int
	// RegionUsage is the usage of the region. 0 means UsageReadSrc |
	// UsageWriteDst: clients read and write it.
	RegionUsage Usage
}

// Listener is a server's endpoint, with the device and Peer it is on.
type Listener struct {
	dev    *uverbs.Context
	peer   *Peer
	ep     *Endpoint
	cfg    ConnConfig
	region *MR

	mu      sync.Mutex
	exposed []byte         // the descriptor sent with each accept
	conns   map[*Conn]bool // accepted, not yet closed
	closed  bool
	once    sync.Once
	err     error
}

// Listen listens at address, "host:port", where host is an address (or
// a name that resolves to one) of the local RDMA device to listen on;
// port 0 picks a free port (see Addr). It is the one-call form of
// ContextByAddr, NewPeer, and Peer.Listen, with a region to expose when
// opts ask for one. Accept connections with Accept.
func Listen(address string, opts *ListenOptions) (*Listener, error) {
	if opts == nil {
		opts = &ListenOptions{}
	}
	if opts.Region < 0 {
		return nil, inval("listen with a region of %d bytes", opts.Region)
	}
	ctx := context.Background()
	addrs, err := resolveAddress(ctx, address, true)
	if err != nil {
		return nil, err
	}
	addr := addrs[0]
	l := &Listener{cfg: oneCallConfig(opts.Conn), conns: make(map[*Conn]bool)}
	if _, err := l.cfg.orDefault(); err != nil {
		return nil, err
	}
	if l.dev, err = ContextByAddr(ctx, addr.Addr(), ContextLocal); err != nil {
		return nil, err
	}
	fail := func(err error) (*Listener, error) {
		l.Close()
		return nil, err
	}
	if l.peer, err = NewPeerWithOptions(l.dev, opts.Peer); err != nil {
		return fail(err)
	}
	if opts.Region > 0 {
		usage := opts.RegionUsage
		if usage == 0 {
			usage = UsageReadSrc | UsageWriteDst
		}
		if l.region, err = l.peer.AllocMR(opts.Region, usage); err != nil {
			return fail(err)
		}
		l.exposed = l.region.Descriptor()
	}
	if l.ep, err = l.peer.Listen(addr); err != nil {
		return fail(err)
	}
	return l, nil
}

// Peer returns the Peer the listener is on: in librpma's words the local
// RDMA device, with its protection domain. Register memory with it.
func (l *Listener) Peer() *Peer {
	if l == nil {
		return nil
	}
	return l.peer
}

// Region returns the region ListenOptions.Region made, or nil.
func (l *Listener) Region() *MR {
	if l == nil {
		return nil
	}
	return l.region
}

// Expose makes the accepts from now on send m's descriptor as private
// data, in place of the Region's; nil sends none.
func (l *Listener) Expose(m *MR) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.exposed = m.Descriptor()
}

// Addr returns the address the listener listens on, with the port the
// kernel chose when it was 0.
func (l *Listener) Addr() (netip.AddrPort, error) {
	if l == nil {
		return netip.AddrPort{}, errNil
	}
	return l.ep.Addr()
}

// Accept waits for the next connection request, accepts it with the
// exposed region's descriptor as private data, and waits until the
// connection is established. The client's private data is the
// connection's PrivateData. Close the connection with its Close; the
// Listener's Close closes those still open.
func (l *Listener) Accept(ctx context.Context) (*Conn, error) {
	if l == nil {
		return nil, errNil
	}
	req, err := l.ep.NextConnRequest(ctx, &l.cfg)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	private := l.exposed
	if l.closed {
		l.mu.Unlock()
		req.Close()
		return nil, closedErr("accept", nil)
	}
	l.mu.Unlock()
	c, err := req.Connect(private)
	if err != nil {
		return nil, err
	}
	if err := c.established(ctx, "accept"); err != nil {
		c.Close()
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.Close()
		return nil, closedErr("accept", nil)
	}
	l.conns[c] = true
	c.listener = l
	return c, nil
}

// forget drops a closed connection from the accepted ones.
func (l *Listener) forget(c *Conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// Close stops listening and releases everything Listen made: the
// connections Accept made that are still open, the regions AllocMR made
// on the peer, the peer and the device. Regions registered with
// RegisterMR must be closed first. Closing it again does nothing and
// returns the first Close's error.
func (l *Listener) Close() error {
	if l == nil {
		return errNil
	}
	l.once.Do(func() {
		l.mu.Lock()
		l.closed = true
		conns := make([]*Conn, 0, len(l.conns))
		for c := range l.conns {
			conns = append(conns, c)
		}
		l.mu.Unlock()
		var errs []error
		if l.ep != nil {
			errs = append(errs, l.ep.Close())
		}
		for _, c := range conns {
			errs = append(errs, c.Close())
		}
		errs = append(errs, closePeer(l.peer, l.dev))
		l.err = errors.Join(errs...)
	})
	return l.err
}

// lookupNetIP resolves host names; the tests replace it, since the test
// VM has no resolver and not even /etc/hosts.
var lookupNetIP = net.DefaultResolver.LookupNetIP

// resolveAddress parses "host:port" and resolves host. A listener may
// have port 0; a dialer may not. Neither may leave the host out: the
// host's address picks the RDMA device.
func resolveAddress(ctx context.Context, address string, listen bool) ([]netip.AddrPort, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, inval("address %q: %v", address, err)
	}
	if host == "" {
		return nil, inval("address %q without a host: the host's address picks the RDMA device", address)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		p, lerr := net.DefaultResolver.LookupPort(ctx, "tcp", portText)
		if lerr != nil {
			return nil, inval("address %q: port %q", address, portText)
		}
		port = uint64(p)
	}
	if port == 0 && !listen {
		return nil, inval("dial %q: port 0", address)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.AddrPort{netip.AddrPortFrom(ip.Unmap(), uint16(port))}, nil
	}
	ips, err := lookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, provider("resolve "+host, err)
	}
	out := make([]netip.AddrPort, 0, len(ips))
	for _, ip := range ips {
		out = append(out, netip.AddrPortFrom(ip.Unmap(), uint16(port)))
	}
	if len(out) == 0 {
		return nil, provider("resolve "+host, syscall.EADDRNOTAVAIL)
	}
	return out, nil
}

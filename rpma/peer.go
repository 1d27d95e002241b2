package rpma

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/purerdma/purerdma/uverbs"
)

// Peer is a local RDMA device ready for librpma's use: an opened context
// and a protection domain (rpma_peer).
type Peer struct {
	ctx   *uverbs.Context
	pd    *uverbs.PD
	iwarp bool
	// nativeFlush and nativeAtomicWrite are librpma 1.3's
	// is_native_flush_supported and is_native_atomic_write_supported:
	// what the device reports, less what PeerOptions turn off.
	nativeFlush       bool
	nativeAtomicWrite bool
	// odp is librpma 1.3's is_odp_supported (IsODPCapable), false with
	// ODPOff; odpMode says when RegisterMR uses it.
	odp     bool
	odpMode ODPMode
	// closed makes the methods of a deleted peer answer ErrClosed before
	// they look at their arguments.
	closed atomic.Bool
	// allocated are the regions of AllocMR still open.
	allocMu   sync.Mutex
	allocated map[*MR]struct{}
}

// usable returns the error of a method on a nil or closed peer.
func (p *Peer) usable(what string) error {
	if p == nil {
		return errNil
	}
	if p.closed.Load() {
		return closedErr(what, nil)
	}
	return nil
}

// FlushMode chooses how a peer's connections flush, and so which access
// its regions with flush usages get.
type FlushMode int

// Flush modes.
const (
	// FlushAuto does what librpma 1.3 does: native RDMA FLUSH when the
	// device has both flush types (rxe since Linux 6.2), and regions
	// with flush usages registered with the FLUSH access flags in place
	// of remote read; otherwise the 8-byte read of FlushEmulated.
	FlushAuto FlushMode = iota
	// FlushEmulated does what librpma 1.2 does, and 1.3 built against
	// rdma-core before 45 (Debian 12 ships librpma 1.2.0 and rdma-core
	// 44): Flush is an 8-byte RDMA read, and regions with flush usages
	// get remote read. Peers of C librpma 1.2 need it on a kernel with
	// native flush: a native FLUSH to their regions, which lack the
	// FLUSH access flags, fails with a remote access error, and their
	// emulated flush of a region registered the FlushAuto way (no
	// remote read unless UsageReadSrc) fails the same way. See
	// docs/librpma-mapping.md.
	FlushEmulated
)

// String returns "auto" or "emulated", the mode's name in log records.
func (m FlushMode) String() string {
	switch m {
	case FlushAuto:
		return "auto"
	case FlushEmulated:
		return "emulated"
	}
	return fmt.Sprintf("FlushMode(%d)", int(m))
}

// ODPMode chooses when a peer registers regions with on-demand paging
// (uverbs.OnDemand): the kernel then pins no memory at registration, and
// the device faults pages in as it touches them, which MR.Advise can do
// ahead of time.
type ODPMode int

// ODP modes.
const (
	// ODPFallback does what librpma 1.3 built with on-demand paging
	// (ON_DEMAND_PAGING_SUPPORTED) does: a registration the kernel
	// refuses with EOPNOTSUPP is made again with on-demand paging when
	// the device is ODP capable (IsODPCapable). Memory the device cannot
	// pin, such as some file mappings, registers that way.
	ODPFallback ODPMode = iota
	// ODPOff never registers with on-demand paging, as librpma built
	// without it; the peer does not ask the device about ODP either.
	ODPOff
	// ODPAlways registers every region with on-demand paging, from the
	// first try: no memory is pinned until the device uses it. librpma
	// has no such choice. NewPeerWithOptions refuses it with
	// ErrUnsupported on a device that is not ODP capable (rxe before
	// Linux 6.14, siw).
	ODPAlways
)

// String returns "fallback", "off" or "always", the mode's name in log
// records.
func (m ODPMode) String() string {
	switch m {
	case ODPFallback:
		return "fallback"
	case ODPOff:
		return "off"
	case ODPAlways:
		return "always"
	}
	return fmt.Sprintf("ODPMode(%d)", int(m))
}

// PeerOptions are choices librpma makes when it is built; the zero value
// is librpma 1.3's.
type PeerOptions struct {
	Flush FlushMode
	ODP   ODPMode
}

// NewPeer creates a peer on dev, an opened device (rpma_peer_new); the
// context stays the caller's. ContextByAddr finds the device of an
// address. It is NewPeerWithOptions with the zero PeerOptions.
func NewPeer(dev *uverbs.Context) (*Peer, error) {
	return NewPeerWithOptions(dev, PeerOptions{})
}

// NewPeerWithOptions creates a peer as NewPeer does, with opts. As
// librpma 1.3's rpma_peer_new, it reads the device's capability flags:
// native atomic write needs IB_UVERBS_DEVICE_ATOMIC_WRITE, native flush
// both IB_UVERBS_DEVICE_FLUSH_GLOBAL and _FLUSH_PERSISTENT; other bits
// are ignored.
func NewPeerWithOptions(dev *uverbs.Context, opts PeerOptions) (*Peer, error) {
	if dev == nil {
		return nil, inval("nil context")
	}
	if opts.Flush != FlushAuto && opts.Flush != FlushEmulated {
		return nil, inval("flush mode %d", int(opts.Flush))
	}
	if opts.ODP < ODPFallback || opts.ODP > ODPAlways {
		return nil, inval("ODP mode %d", int(opts.ODP))
	}
	caps := dev.DeviceCapFlags()
	p := &Peer{
		ctx:               dev,
		iwarp:             dev.Device().NodeType == uverbs.NodeRNIC,
		nativeAtomicWrite: caps&uverbs.DeviceAtomicWrite != 0,
		nativeFlush: opts.Flush == FlushAuto &&
			caps&(uverbs.DeviceFlushGlobal|uverbs.DeviceFlushPersistent) == uverbs.DeviceFlushGlobal|uverbs.DeviceFlushPersistent,
		odpMode: opts.ODP,
	}
	if opts.ODP != ODPOff {
		// As rpma_peer_new, which fails when it cannot ask.
		odp, err := IsODPCapable(dev)
		if err != nil {
			return nil, err
		}
		if !odp && opts.ODP == ODPAlways {
			return nil, unsupported("peer with ODPAlways: %s is not ODP capable", dev.Device().Name)
		}
		p.odp = odp
	}
	if !p.nativeAtomicWrite {
		logf(LogInfo, "rpma: Native atomic write is not supported - ordinary RDMA write will be used instead.")
	}
	if !p.nativeFlush {
		logf(LogInfo, "rpma: Native flush is not supported - ordinary RDMA read will be used instead.", "mode", opts.Flush.String())
	}
	pd, err := dev.AllocPD()
	if err != nil {
		return nil, provider("peer", err)
	}
	p.pd = pd
	return p, nil
}

// NativeFlush reports whether the peer's connections flush with RDMA
// FLUSH (completion opcode cq.OpFlush) rather than an 8-byte RDMA read
// (cq.OpRDMARead).
func (p *Peer) NativeFlush() bool { return p != nil && p.nativeFlush }

// NativeAtomicWrite reports whether the peer's connections write atomically
// with RDMA ATOMIC WRITE (completion opcode cq.OpAtomicWrite) rather than
// a fenced inline RDMA write (cq.OpRDMAWrite).
func (p *Peer) NativeAtomicWrite() bool { return p != nil && p.nativeAtomicWrite }

// ODP reports whether the peer may register regions with on-demand
// paging: the device is ODP capable and the mode is not ODPOff.
func (p *Peer) ODP() bool { return p != nil && p.odp }

// Context returns the peer's device context.
func (p *Peer) Context() *uverbs.Context {
	if p == nil {
		return nil
	}
	return p.ctx
}

// Close deletes the peer (rpma_peer_delete). Its regions and connections
// must be gone first: until they are, it fails (ErrProvider wrapping
// uverbs.ErrBusy) and the peer stays usable. Closing it again does
// nothing, as rpma_peer_delete does with a NULL *peer_ptr.
func (p *Peer) Close() error {
	if p == nil {
		return errNil
	}
	if p.closed.Load() {
		return nil
	}
	if err := p.pd.Close(); err != nil {
		return provider("peer delete", err)
	}
	p.closed.Store(true)
	return nil
}

// PeerConfig is what one side tells the other about its memory
// (rpma_peer_cfg).
type PeerConfig struct {
	// DirectWriteToPMem says that RDMA writes to the peer's persistent
	// memory are persistent once flushed: it enables FlushPersistent.
	DirectWriteToPMem bool
}

// PeerConfigDescriptorSize is the size of a peer config descriptor.
const PeerConfigDescriptorSize = 1

// Descriptor returns the config's wire form: one byte, as librpma sends
// it (rpma_peer_cfg_get_descriptor).
func (c PeerConfig) Descriptor() []byte {
	if c.DirectWriteToPMem {
		return []byte{1}
	}
	return []byte{0}
}

// PeerConfigFromDescriptor decodes a descriptor
// (rpma_peer_cfg_from_descriptor).
func PeerConfigFromDescriptor(b []byte) (PeerConfig, error) {
	if len(b) < PeerConfigDescriptorSize {
		return PeerConfig{}, inval("peer config descriptor of %d bytes", len(b))
	}
	return PeerConfig{DirectWriteToPMem: b[0] != 0}, nil
}

package rpma

import (
	"github.com/purerdma/purerdma/uverbs"
)

// Peer is a local RDMA device ready for librpma's use: an opened context
// and a protection domain (rpma_peer).
type Peer struct {
	ctx   *uverbs.Context
	pd    *uverbs.PD
	iwarp bool
}

// NewPeer creates a peer on an opened device (rpma_peer_new); the
// context stays the caller's. ContextByAddr finds the device of an
// address.
func NewPeer(ctx *uverbs.Context) (*Peer, error) {
	if ctx == nil {
		return nil, inval("nil context")
	}
	pd, err := ctx.AllocPD()
	if err != nil {
		return nil, provider("peer", err)
	}
	return &Peer{ctx: ctx, pd: pd, iwarp: ctx.Device().NodeType == uverbs.NodeRNIC}, nil
}

// Context returns the peer's device context.
func (p *Peer) Context() *uverbs.Context {
	if p == nil {
		return nil
	}
	return p.ctx
}

// Close deletes the peer (rpma_peer_delete). Its regions and connections
// must be gone first.
func (p *Peer) Close() error {
	if p == nil {
		return ErrInval
	}
	if err := p.pd.Close(); err != nil {
		return provider("peer delete", err)
	}
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

package rpma

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// Usage says what a registered region will be used for
// (RPMA_MR_USAGE_*); it decides the region's access flags and travels in
// its descriptor.
type Usage uint8

// Region usages.
const (
	UsageReadSrc             Usage = 1 << 0 // read by the peer
	UsageReadDst             Usage = 1 << 1 // local destination of a read
	UsageWriteSrc            Usage = 1 << 2 // local source of a write
	UsageWriteDst            Usage = 1 << 3 // written by the peer
	UsageFlushTypeVisibility Usage = 1 << 4 // the peer may flush it for visibility
	UsageFlushTypePersistent Usage = 1 << 5 // the peer may flush it to persistence
	UsageSend                Usage = 1 << 6
	UsageRecv                Usage = 1 << 7
)

const usageAll = 1<<8 - 1

// access returns the verbs access flags librpma registers a region of
// usage u with (rpma_peer_usage2access). With native flush, librpma 1.3
// gives the flush usages the FLUSH access flags and no longer remote
// read, which only the emulated flush needs.
func (p *Peer) access(u Usage) uverbs.Access {
	var a uverbs.Access
	if u&UsageReadSrc != 0 {
		a |= uverbs.RemoteRead
	}
	switch {
	case p.nativeFlush:
		if u&UsageFlushTypeVisibility != 0 {
			a |= uverbs.AccessFlushGlobal
		}
		if u&UsageFlushTypePersistent != 0 {
			a |= uverbs.AccessFlushPersistent
		}
	case u&(UsageFlushTypeVisibility|UsageFlushTypePersistent) != 0:
		a |= uverbs.RemoteRead
	}
	if u&UsageReadDst != 0 {
		a |= uverbs.LocalWrite
		if p.iwarp {
			// iWARP's read responses write the sink as a remote write.
			a |= uverbs.RemoteWrite
		}
	}
	if u&(UsageWriteSrc|UsageRecv) != 0 {
		a |= uverbs.LocalWrite
	}
	if u&UsageWriteDst != 0 {
		a |= uverbs.RemoteWrite | uverbs.LocalWrite
	}
	return a
}

// MR is a registered local region (rpma_mr_local).
type MR struct {
	region *mr.MR
	usage  Usage
	// closed makes operations on a deregistered region fail before
	// they post: its lkey may belong to a new registration by then.
	closed atomic.Bool
	// owned is the memory of an AllocMR region, which Close frees after
	// the deregistration; peer is the peer that tracks it.
	owned []byte
	peer  *Peer
	freed sync.Once
	// onDemand is set when the region was registered with on-demand
	// paging.
	onDemand bool
}

// RegisterMR registers buf for usage (rpma_mr_reg). buf must be memory
// that stays put: from mr.Alloc, or declared with mr.Mapped (see package
// mr).
func (p *Peer) RegisterMR(buf []byte, usage Usage) (*MR, error) {
	if err := p.usable("register"); err != nil {
		return nil, err
	}
	switch {
	case len(buf) == 0:
		return nil, inval("register an empty region")
	case usage == 0 || usage&^usageAll != 0:
		return nil, inval("register with usage %#x", uint8(usage))
	}
	access := p.access(usage)
	if p.odpMode == ODPAlways {
		access |= uverbs.OnDemand
	}
	r, err := mr.Register(p.pd, buf, access)
	if errors.Is(err, mr.ErrNotMapped) {
		return nil, inval("%v", err)
	}
	if err != nil && p.odpMode == ODPFallback && errors.Is(err, syscall.EOPNOTSUPP) {
		// librpma 1.3's rpma_peer_setup_mr_reg: memory the device cannot
		// pin may still register with on-demand paging.
		if !p.odp {
			logf(LogError, "rpma: Peer does not support On-Demand Paging", "length", len(buf), "access", uint32(access))
			return nil, provider("register", err)
		}
		access |= uverbs.OnDemand
		r, err = mr.Register(p.pd, buf, access)
	}
	if err != nil && access&uverbs.AccessFlushPersistent != 0 && errors.Is(err, syscall.EINVAL) {
		// librpma 1.3 fails the same way; say why.
		return nil, provider("register", fmt.Errorf("%w (rxe grants FLUSH_PERSISTENT access only to persistent memory: "+
			"register without UsageFlushTypePersistent, or use a peer with FlushEmulated)", err))
	}
	if err != nil {
		return nil, provider("register", err)
	}
	return &MR{region: r, usage: usage, onDemand: access&uverbs.OnDemand != 0}, nil
}

// OnDemand reports whether the region was registered with on-demand
// paging (see ODPMode).
func (m *MR) OnDemand() bool { return m != nil && m.onDemand }

// DescriptorSize is the size of an MR descriptor
// (rpma_mr_get_descriptor_size).
const DescriptorSize = 21

// Descriptor returns the region's wire description, librpma's 21 bytes:
// address, length (u64 little-endian each), rkey (u32 LE) and usage
// (rpma_mr_get_descriptor).
func (m *MR) Descriptor() []byte {
	if m == nil {
		return nil
	}
	b := make([]byte, DescriptorSize)
	binary.LittleEndian.PutUint64(b[0:], m.region.Addr())
	binary.LittleEndian.PutUint64(b[8:], uint64(m.region.Len()))
	binary.LittleEndian.PutUint32(b[16:], m.region.RKey())
	b[20] = byte(m.usage)
	return b
}

// Bytes returns the registered memory (rpma_mr_get_ptr).
func (m *MR) Bytes() []byte {
	if m == nil {
		return nil
	}
	return m.region.Bytes()
}

// Len returns the region's size (rpma_mr_get_size).
func (m *MR) Len() int {
	if m == nil {
		return 0
	}
	return m.region.Len()
}

// Usage returns the usage the region was registered for.
func (m *MR) Usage() Usage {
	if m == nil {
		return 0
	}
	return m.usage
}

// Close deregisters the region (rpma_mr_dereg). The kernel lets a
// region go while posted operations use it: those that have not reached
// it yet fail (docs/faults.md). Operations given a closed region return
// ErrClosed. Closing it again does nothing, as rpma_mr_dereg does with a
// NULL *mr_ptr.
//
// A region from Peer.AllocMR is freed too, after its deregistration:
// the device may write into the memory until then.
func (m *MR) Close() error {
	if m == nil {
		return errNil
	}
	err := m.region.Close()
	if err == nil {
		m.closed.Store(true)
	}
	if err != nil || m.owned == nil {
		return provider("deregister", err)
	}
	m.freed.Do(func() {
		err = mr.Free(m.owned)
		m.peer.forget(m)
	})
	return provider("free", err)
}

// sge returns the SGE for n bytes at off, checking the range.
func (m *MR) sge(off, n int) (uverbs.SGE, error) {
	if m.closed.Load() {
		// Its lkey may belong to a new registration by now.
		return uverbs.SGE{}, errDeregistered
	}
	// n > Len-off, not off+n > Len: the sum of two large ints wraps.
	if off < 0 || n < 0 || off > m.Len() || n > m.Len()-off {
		return uverbs.SGE{}, inval("range [%d, +%d) outside a region of %d bytes", off, n, m.Len())
	}
	return uverbs.SGE{Addr: m.region.Addr() + uint64(off), Length: uint32(n), LKey: m.region.LKey()}, nil
}

// errDeregistered is the error of an operation given a closed region,
// made once: the data path does not allocate.
var errDeregistered = closedErr("deregistered region", nil)

// RemoteMR is a region of the peer, known from its descriptor
// (rpma_mr_remote).
type RemoteMR struct {
	addr  uint64
	size  uint64
	rkey  uint32
	usage Usage
}

// RemoteMRFromDescriptor decodes a descriptor the peer sent
// (rpma_mr_remote_from_descriptor). Longer input is accepted, as librpma
// does; a usage of 0 is invalid.
func RemoteMRFromDescriptor(b []byte) (*RemoteMR, error) {
	if len(b) < DescriptorSize {
		return nil, inval("MR descriptor of %d bytes, want %d", len(b), DescriptorSize)
	}
	r := &RemoteMR{
		addr:  binary.LittleEndian.Uint64(b[0:]),
		size:  binary.LittleEndian.Uint64(b[8:]),
		rkey:  binary.LittleEndian.Uint32(b[16:]),
		usage: Usage(b[20]),
	}
	if r.usage == 0 {
		return nil, inval("MR descriptor with no usage")
	}
	return r, nil
}

// Len returns the remote region's size (rpma_mr_remote_get_size).
func (r *RemoteMR) Len() uint64 {
	if r == nil {
		return 0
	}
	return r.size
}

// FlushType returns the flush usages the peer registered the region with
// (rpma_mr_remote_get_flush_type).
func (r *RemoteMR) FlushType() Usage {
	if r == nil {
		return 0
	}
	return r.usage & (UsageFlushTypePersistent | UsageFlushTypeVisibility)
}

// at returns the remote address of off, checking the range.
func (r *RemoteMR) at(off, n int) (uint64, error) {
	if off < 0 || n < 0 || uint64(off)+uint64(n) > r.size {
		return 0, inval("remote range [%d, +%d) outside a region of %d bytes", off, n, r.size)
	}
	return r.addr + uint64(off), nil
}

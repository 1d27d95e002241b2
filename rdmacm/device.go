package rdmacm

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/uverbs"
)

// device is an opened verbs device and the PD its IDs share, as
// librdmacm keeps one per device for all IDs of the process.
type device struct {
	key  devKey
	ctx  *uverbs.Context
	pd   *uverbs.PD
	refs int
	rd   devLimits
}

type devKey struct {
	guid  uverbs.GUID
	index uint32
}

var devices = struct {
	sync.Mutex
	m map[devKey]*device
}{m: map[devKey]*device{}}

// openDevice returns the device with the node GUID and index the kernel
// named, opening it on first use.
func openDevice(key devKey) (*device, error) {
	devices.Lock()
	defer devices.Unlock()
	if d := devices.m[key]; d != nil {
		d.refs++
		return d, nil
	}
	all, err := uverbs.Devices()
	if err != nil {
		return nil, err
	}
	for _, dv := range all {
		// Sysfs-only discovery knows no index; the GUID decides then.
		if dv.NodeGUID != key.guid || (dv.Index != 0 && dv.Index != key.index) {
			continue
		}
		ctx, err := uverbs.Open(dv)
		if err != nil {
			return nil, err
		}
		pd, err := ctx.AllocPD()
		if err != nil {
			ctx.Close()
			return nil, err
		}
		d := &device{key: key, ctx: ctx, pd: pd, refs: 1}
		devices.m[key] = d
		return d, nil
	}
	return nil, fmt.Errorf("rdmacm: no verbs device with node GUID %s (index %d): %w", key.guid, key.index, uverbs.ErrNoDevice)
}

func (d *device) release() {
	devices.Lock()
	defer devices.Unlock()
	if d.refs--; d.refs > 0 {
		return
	}
	delete(devices.m, d.key)
	d.pd.Close()
	d.ctx.Close()
}

// query runs RDMA_USER_CM_CMD_QUERY with RDMA_USER_CM_QUERY_ADDR.
func (id *ID) query() (abi.UcmQueryAddrResp, error) {
	req := abi.UcmQuery{ID: id.handle, Option: abi.RDMA_USER_CM_QUERY_ADDR}
	var resp abi.UcmQueryAddrResp
	err := id.do(abi.RDMA_USER_CM_CMD_QUERY, ucmd.Bytes(&req), 0, ucmd.Bytes(&resp))
	return resp, err
}

// bindDevice opens the verbs device the kernel bound the ID to, if it did
// and the ID has none yet.
func (id *ID) bindDevice() error {
	r, err := id.query()
	if err != nil {
		return fmt.Errorf("rdmacm: query the bound device: %w", err)
	}
	if r.NodeGUID == 0 {
		return nil // not bound to a device (a wildcard address)
	}
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], r.NodeGUID)
	key := devKey{guid: uverbs.GUID(binary.BigEndian.Uint64(b[:])), index: r.IbdevIndex}
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.dev != nil {
		return nil
	}
	d, err := openDevice(key)
	if err != nil {
		return err
	}
	id.dev, id.port = d, r.PortNum
	return nil
}

// Context returns the verbs context of the device the ID is bound to, or
// nil before it is bound (by Bind to a device's address, address
// resolution, or as a connection request's ID).
func (id *ID) Context() *uverbs.Context {
	if d := id.device(); d != nil {
		return d.ctx
	}
	return nil
}

// PD returns the protection domain that the IDs on the ID's device share,
// or nil before the ID is bound to a device.
func (id *ID) PD() *uverbs.PD {
	if d := id.device(); d != nil {
		return d.pd
	}
	return nil
}

// device returns the device the ID is bound to, or nil (also for a nil
// ID). A device's ctx and pd never change, so they may be read after the
// lock is dropped.
func (id *ID) device() *device {
	if id == nil {
		return nil
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	return id.dev
}

// Port returns the device port the ID is bound to.
func (id *ID) Port() uint8 {
	if id == nil {
		return 0
	}
	return id.port
}

// LocalAddr returns the ID's local address (rdma_get_local_addr).
func (id *ID) LocalAddr() (netip.AddrPort, error) {
	if id == nil {
		return netip.AddrPort{}, ErrClosed
	}
	r, err := id.query()
	if err != nil {
		return netip.AddrPort{}, err
	}
	return storedSockaddr(&r.SrcAddr, r.SrcSize)
}

// RemoteAddr returns the peer's address (rdma_get_peer_addr).
func (id *ID) RemoteAddr() (netip.AddrPort, error) {
	if id == nil {
		return netip.AddrPort{}, ErrClosed
	}
	r, err := id.query()
	if err != nil {
		return netip.AddrPort{}, err
	}
	return storedSockaddr(&r.DstAddr, r.DstSize)
}

// iwarp reports whether the ID's device speaks iWARP, where the kernel
// moves the QP through RTR and RTS itself.
func (id *ID) iwarp() bool {
	d := id.dev
	return d != nil && d.ctx.Device().NodeType == uverbs.NodeRNIC
}

package rpma

import (
	"context"
	"net/netip"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// ContextType says whether ContextByAddr looks up a local address or
// the device that reaches a remote one (enum rpma_util_ibv_context_type).
type ContextType int

// Context types.
const (
	ContextLocal  ContextType = 0
	ContextRemote ContextType = 1
)

// ContextByAddr opens the device with the local address addr, or the one
// that reaches the remote addr (rpma_utils_get_ibv_context). The caller
// closes the context.
func ContextByAddr(ctx context.Context, addr netip.Addr, typ ContextType) (*uverbs.Context, error) {
	if !addr.IsValid() || (typ != ContextLocal && typ != ContextRemote) {
		return nil, inval("look up %v (%d)", addr, typ)
	}
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		return nil, provider("event channel", err)
	}
	defer ch.Close()
	id, err := ch.CreateID(rdmacm.TCP)
	if err != nil {
		return nil, provider("create ID", err)
	}
	if typ == ContextLocal {
		err = id.Bind(netip.AddrPortFrom(addr, 0))
	} else if err = id.ResolveAddr(netip.AddrPort{}, netip.AddrPortFrom(addr, 0), DefaultTimeout); err == nil {
		_, err = id.WaitEvent(ctx, rdmacm.EventAddrResolved)
	}
	if err != nil {
		return nil, provider("look up "+addr.String(), err)
	}
	dc := id.Context()
	if dc == nil {
		return nil, inval("no RDMA device has %s", addr)
	}
	c, err := uverbs.Open(dc.Device())
	return c, provider("open device", err)
}

// IsODPCapable reports whether the device supports on-demand paging for
// RC reads and writes (rpma_utils_ibv_context_is_odp_capable).
func IsODPCapable(dev *uverbs.Context) (bool, error) {
	if dev == nil {
		return false, inval("nil context")
	}
	a, err := dev.QueryDevice()
	if err != nil {
		return false, provider("query device", err)
	}
	const rw = abi.IB_ODP_SUPPORT_WRITE | abi.IB_ODP_SUPPORT_READ
	return a.ODPGeneralCaps&abi.IB_ODP_SUPPORT != 0 && a.ODPRCCaps&rw == rw, nil
}

// Package drivers is the one list of the kernel's RDMA drivers purerdma
// knows: each one's name as rdma-core spells its provider and, for the
// drivers whose data path purerdma runs, the Go provider.
//
// internal/verbs opens every device context through Provider, so each
// provider listed here is linked into every binary that can open a
// device: there is no registration that only an import for its side
// effect would trigger (mlx5 was once missing from every user's binary
// that way). A new provider is a package under internal/provider and one
// line in the table below; TestEveryProviderListed fails until it is.
package drivers

import (
	"fmt"
	"sort"
	"strings"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mlx5"
	"github.com/purerdma/purerdma/internal/provider/rxe"
	"github.com/purerdma/purerdma/internal/provider/siw"
)

// known is a kernel driver (enum rdma_driver_id) and, when purerdma has
// one, its provider.
type known struct {
	name     string
	provider provider.Driver
}

var table = map[uint32]known{
	abi.RDMA_DRIVER_MLX5:       {"mlx5", mlx5.Driver()},
	abi.RDMA_DRIVER_MLX4:       {"mlx4", nil},
	abi.RDMA_DRIVER_CXGB3:      {"cxgb3", nil},
	abi.RDMA_DRIVER_CXGB4:      {"cxgb4", nil},
	abi.RDMA_DRIVER_MTHCA:      {"mthca", nil},
	abi.RDMA_DRIVER_BNXT_RE:    {"bnxt_re", nil},
	abi.RDMA_DRIVER_OCRDMA:     {"ocrdma", nil},
	abi.RDMA_DRIVER_NES:        {"nes", nil},
	abi.RDMA_DRIVER_IRDMA:      {"irdma", nil},
	abi.RDMA_DRIVER_VMW_PVRDMA: {"vmw_pvrdma", nil},
	abi.RDMA_DRIVER_QEDR:       {"qedr", nil},
	abi.RDMA_DRIVER_HNS:        {"hns", nil},
	abi.RDMA_DRIVER_USNIC:      {"usnic", nil},
	abi.RDMA_DRIVER_RXE:        {"rxe", rxe.Driver()},
	abi.RDMA_DRIVER_HFI1:       {"hfi1", nil},
	abi.RDMA_DRIVER_QIB:        {"qib", nil},
	abi.RDMA_DRIVER_EFA:        {"efa", nil},
	abi.RDMA_DRIVER_SIW:        {"siw", siw.Driver()},
	abi.RDMA_DRIVER_ERDMA:      {"erdma", nil},
}

// Name returns rdma-core's provider name for a kernel driver id ("mlx5"),
// or "" for an id this table does not know.
func Name(id uint32) string { return table[id].name }

// Label names a driver id in messages: its name, or the number when the
// name is unknown.
func Label(id uint32) string {
	if n := Name(id); n != "" {
		return n
	}
	return fmt.Sprintf("id %d", id)
}

// ByName returns the kernel driver id of rdma-core's provider name.
func ByName(name string) (uint32, bool) {
	for id, k := range table {
		if k.name == name {
			return id, true
		}
	}
	return abi.RDMA_DRIVER_UNKNOWN, false
}

// FromDeviceName guesses the driver of a device from its name, as
// libibverbs matches providers when the kernel does not say (sysfs
// without netlink): the longest driver name the device name starts with
// ("siw0" is siw, "mlx5_0" mlx5), else RDMA_DRIVER_UNKNOWN.
func FromDeviceName(dev string) uint32 {
	id, best := uint32(abi.RDMA_DRIVER_UNKNOWN), 0
	for i, k := range table {
		if len(k.name) > best && strings.HasPrefix(dev, k.name) {
			id, best = i, len(k.name)
		}
	}
	return id
}

// FromKernelDriver returns the driver id of a device whose parent (a PCI
// function, or an auxiliary device) is bound to the kernel driver module:
// mlx5_core is mlx5, and a module named as its provider is that
// provider's (efa, erdma, irdma, bnxt_re).
func FromKernelDriver(module string) (uint32, bool) {
	switch module {
	case "mlx5_core":
		return abi.RDMA_DRIVER_MLX5, true
	case "mlx4_core":
		return abi.RDMA_DRIVER_MLX4, true
	}
	return ByName(module)
}

// Provider returns the Go provider of a kernel driver id; false when
// purerdma runs no data path for that driver.
func Provider(id uint32) (provider.Driver, bool) {
	p := table[id].provider
	return p, p != nil
}

// WithProvider lists, sorted, the names of the drivers that have a Go
// provider.
func WithProvider() []string {
	var names []string
	for _, k := range table {
		if k.provider != nil {
			names = append(names, k.name)
		}
	}
	sort.Strings(names)
	return names
}

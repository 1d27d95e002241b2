package mlx5

import (
	"fmt"
	"math/rand/v2"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// mlx5Rate maps an IB static rate (enum ibv_rate) to the device's
// (ib_to_mlx5_rate_table); rates past it are 0, unlimited.
var mlx5Rate = [...]uint8{0, 0, 7, 8, 9, 10, 11, 12, 13, 14, 15, 11, 13, 15, 0, 9, 15, 0, 0, 9, 13, 0, 0}

// The RoCE v2 UDP source ports an AH may pick.
const (
	rocePortMin   = 0xc000
	rocePortMax   = 0xffff
	flowLabelMask = 0xfffff
)

// NewAH builds the address vector UD sends copy into their WQEs, as
// mlx5_create_ah: for InfiniBand the LID, path bits and SL, for RoCE the
// SL, the UDP source port and the destination MAC the kernel resolved in
// CREATE_AH's response; for both the GRH fields when the AH is global.
func (c *context) NewAH(attr *provider.AHAttr, resp []byte) (provider.AH, error) {
	if attr.PortNum < 1 || int(attr.PortNum) > c.numPorts {
		return provider.AH{}, fmt.Errorf("mlx5: AH on port %d of %d: %w", attr.PortNum, c.numPorts, provider.ErrInvalid)
	}
	eth := attr.Ethernet
	if !attr.IsGlobal && eth {
		return provider.AH{}, fmt.Errorf("mlx5: a RoCE AH needs a GRH: %w", provider.ErrInvalid)
	}
	var ah provider.AH
	a := mem.At[av](ah.AV[:], 0)
	rate := uint8(0)
	if int(attr.StaticRate) < len(mlx5Rate) {
		rate = mlx5Rate[attr.StaticRate]
	}
	grh := uint32(0)
	if eth {
		// The GID type is not known here: the port is taken for RoCE
		// v2, whose packets carry the port in rlid (libmlx5 sets it for
		// v2 GIDs only).
		a.rlid.set(udpSport(attr.FlowLabel))
		a.statRateSL = rate<<4 | (attr.SL&0x7)<<1
	} else {
		a.flMLID = attr.SrcPathBits & 0x7f
		a.rlid.set(attr.DLID)
		grh = 1
		a.statRateSL = rate<<4 | attr.SL&0xf
	}
	if attr.IsGlobal {
		a.tclass = attr.TrafficClass
		a.hopLimit = attr.HopLimit
		a.grhGIDFL.set(grh<<30 | uint32(attr.SGIDIndex)<<20 | attr.FlowLabel&flowLabelMask)
		a.rgid = attr.DGID
	}
	if eth {
		if c.cmdsSuppUHW&abi.MLX5_USER_CMDS_SUPP_UHW_CREATE_AH == 0 {
			// libmlx5 resolves the MAC through netlink then.
			return provider.AH{}, fmt.Errorf("mlx5: RoCE AH on a kernel that does not resolve its MAC: %w", provider.ErrUnsupported)
		}
		var r abi.MLX5CreateAHResp
		decode(resp, &r)
		a.rmac = r.DMAC
	}
	return ah, nil
}

// udpSport is the RoCE v2 source port of an AH: from the flow label if it
// has one (ibv_flow_label_to_udp_sport), else random in the range.
func udpSport(fl uint32) uint16 {
	fl &= flowLabelMask
	if fl == 0 {
		return uint16(rand.N(rocePortMax+1-rocePortMin) + rocePortMin)
	}
	lo, hi := fl&0x3fff, fl&0xfc000
	lo ^= hi >> 14
	return uint16(lo | rocePortMin)
}

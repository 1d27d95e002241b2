package uverbs

import (
	"fmt"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
)

// AH is an address handle: where a UD send goes.
type AH struct {
	core   *verbs.Context
	handle uint32
	av     provider.AH // what the provider's send queue names it by
	id     uint64

	destroy verbs.Life
}

// CreateAH creates an address handle in pd (ibv_create_ah). On RoCE the
// address must be global: set IsGlobal, GRH.DGID and GRH.SGIDIndex.
func (pd *PD) CreateAH(attr AHAttr) (*AH, error) {
	if pd == nil {
		return nil, ErrClosed
	}
	c := pd.ctx.core
	if err := c.NeedDriver("uverbs: create AH"); err != nil {
		return nil, err
	}
	ah := &AH{core: c}
	ah.id = c.Add(ah, func() { ah.destroy.Release(ah.release) })
	d := attr.dest()
	req := abi.CreateAH{
		UserHandle: ah.id,
		PDHandle:   pd.Handle(),
		Attr: abi.AHAttr{
			GRH: abi.GlobalRoute{
				DGID: d.DGID, FlowLabel: d.FlowLabel, SGIDIndex: d.SGIDIndex,
				HopLimit: d.HopLimit, TrafficClass: d.TrafficClass,
			},
			DLID: d.DLID, SL: d.SL, SrcPathBits: d.SrcPathBits,
			StaticRate: d.StaticRate, IsGlobal: d.IsGlobal, PortNum: d.PortNum,
		},
	}
	var resp abi.CreateAHResp
	_, out := c.Udata(abi.IB_USER_VERBS_CMD_CREATE_AH)
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_CREATE_AH, Req: ucmd.Bytes(&req), Resp: ucmd.Bytes(&resp), DrvOut: make([]byte, out)}
	if err := pd.core.Do(&cmd); err != nil {
		c.Remove(ah.id)
		return nil, fmt.Errorf("uverbs: create AH: %w", verbs.Public(err))
	}
	ah.handle = resp.AHHandle
	// The driver builds its address from the attributes and, for mlx5,
	// the port's link layer, asked once the kernel has taken the port.
	port, err := pd.ctx.QueryPort(d.PortNum)
	if err == nil {
		ah.av, err = c.Provider.NewAH(&provider.AHAttr{
			DGID: d.DGID, FlowLabel: d.FlowLabel, SGIDIndex: d.SGIDIndex,
			HopLimit: d.HopLimit, TrafficClass: d.TrafficClass,
			DLID: d.DLID, SL: d.SL, SrcPathBits: d.SrcPathBits,
			StaticRate: d.StaticRate, IsGlobal: d.IsGlobal != 0, PortNum: d.PortNum,
			Ethernet: port.LinkLayer == LinkLayerEthernet,
		}, cmd.DrvOut)
	}
	if err != nil {
		c.Do(ah.destroyCmd())
		c.Remove(ah.id)
		return nil, fmt.Errorf("uverbs: create AH: %w", verbs.Public(err))
	}
	return ah, nil
}

func (ah *AH) destroyCmd() *ucmd.Cmd {
	req := abi.DestroyAH{AHHandle: ah.handle}
	return &ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_DESTROY_AH, Req: ucmd.Bytes(&req)}
}

// Close destroys the address handle. It is safe to call more than once.
func (ah *AH) Close() error {
	if ah == nil {
		return ErrClosed
	}
	return ah.destroy.Destroy(ah.core, "uverbs: destroy AH", ah.destroyCmd(), ah.release)
}

func (ah *AH) release() { ah.core.Remove(ah.id) }

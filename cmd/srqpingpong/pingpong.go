package main

import (
	"errors"
	"fmt"

	"github.com/purerdma/purerdma/cmd/internal/pingpong"
	"github.com/purerdma/purerdma/uverbs"
)

// ppContext holds the verbs objects (struct pingpong_context).
type ppContext struct {
	pingpong.Base
	srq *uverbs.SRQ
	qps []*uverbs.QP

	recvs []uverbs.RecvWR // rxDepth identical receives
	send  []uverbs.SendWR // one send
}

// maxQP is MAX_QP: the C tool's QP array, and how many addresses each
// side sends in the exchange whatever -q says.
const maxQP = 256

// newPingpong is pp_init_ctx: it opens the device and makes the channel,
// PD, buffer, MR, CQ, SRQ and QPs, and moves the QPs to INIT. On error
// everything made is released.
func newPingpong(o *pingpong.Options) (_ *ppContext, err error) {
	p := &ppContext{}
	if p.Ctx, err = pingpong.OpenDevice(o.IBDev); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	// The buffer stays zeroed, as C's memset leaves it.
	if err = p.Alloc(o.Events, o.Size, o.RxDepth+o.NumQP); err != nil {
		return nil, err
	}
	if p.srq, err = p.PD.CreateSRQ(uverbs.SRQInit{MaxWR: o.RxDepth, MaxSGE: 1}); err != nil {
		return nil, fmt.Errorf("Couldn't create SRQ (%v)", err)
	}
	sendFlags := uverbs.SendSignaled
	for i := range o.NumQP {
		qp, err := p.PD.CreateQP(uverbs.QPInit{
			Type: uverbs.RC, SendCQ: p.CQ, RecvCQ: p.CQ, SRQ: p.srq,
			Cap: uverbs.QPCap{MaxSendWR: 1, MaxSendSGE: 1},
		})
		if err != nil {
			return nil, fmt.Errorf("Couldn't create QP[%d] (%v)", i, err)
		}
		p.qps = append(p.qps, qp)
		if qp.Cap().MaxInlineData >= o.Size {
			sendFlags |= uverbs.SendInline
		}
	}
	for i, qp := range p.qps {
		if err = qp.Init(uint8(o.IBPort), 0); err != nil {
			return nil, fmt.Errorf("Failed to modify QP[%d] to INIT (%v)", i, err)
		}
	}

	sge := []uverbs.SGE{{Addr: p.MR.Addr(), Length: uint32(o.Size), LKey: p.MR.LKey()}}
	p.recvs = make([]uverbs.RecvWR, o.RxDepth)
	for i := range p.recvs {
		p.recvs[i] = uverbs.RecvWR{ID: pingpong.RecvWRID, SGE: sge}
	}
	p.send = []uverbs.SendWR{{ID: pingpong.SendWRID, Opcode: uverbs.WRSend, Flags: sendFlags, SGE: sge}}
	return p, nil
}

// connect is pp_connect_ctx: each QP to RTR towards its peer, then RTS.
// As in C, whether the route is global, and the GID it goes to, come from
// the peer's first address.
func (p *ppContext) connect(o *pingpong.Options, my, rem []pingpong.Dest) error {
	for i, qp := range p.qps {
		err := qp.ConnectRC(uverbs.RCPath{
			Port: uint8(o.IBPort), MTU: o.MTU, SL: uint8(o.SL), SGIDIndex: uint8(o.GIDIdx),
			Global: [8]byte(rem[0].GID[8:]) != [8]byte{}, DGID: rem[0].GID, DLID: rem[i].LID,
			DestQPN: rem[i].QPN, DestPSN: rem[i].PSN, PSN: my[i].PSN, RdAtomic: 1,
		})
		if te, ok := errors.AsType[*uverbs.TransitionError](err); ok {
			return fmt.Errorf("Failed to modify QP[%d] to %s (%v)", i, te.State, te.Err)
		} else if err != nil {
			return fmt.Errorf("Failed to modify QP[%d] (%v)", i, err)
		}
	}
	return nil
}

// postRecv is pp_post_recv: it posts n receives of the whole buffer to
// the SRQ and returns how many it posted.
func (p *ppContext) postRecv(n int) int {
	posted, _ := p.srq.PostRecv(p.recvs[:n])
	return posted
}

// postSend is pp_post_send: one send of the whole buffer on QP i.
func (p *ppContext) postSend(i int) error {
	_, err := p.qps[i].PostSend(p.send)
	return err
}

// close is pp_close_ctx; it releases what exists, in the kernel's order,
// and returns the first failure as the C tool words it.
func (p *ppContext) close() error {
	var c pingpong.Closer
	for i, qp := range p.qps {
		c.Step(true, qp.Close, fmt.Sprintf("Couldn't destroy QP[%d]", i))
	}
	c.Step(p.srq != nil, func() error { return p.srq.Close() }, "Couldn't destroy SRQ")
	p.Base.Close(&c, nil)
	return c.Err()
}

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
	qp *uverbs.QP

	recvs []uverbs.RecvWR // rxDepth identical receives
	send  []uverbs.SendWR // one send
}

// newPingpong is pp_init_ctx: it opens the device and makes the channel,
// PD, buffer, MR, CQ and QP, and moves the QP to INIT. On error
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
	if err = p.Alloc(o.Events, o.Size, o.RxDepth+1); err != nil {
		return nil, err
	}
	for i := range p.Buf {
		p.Buf[i] = 0x7b // as the C tool does
	}
	p.qp, err = p.PD.CreateQP(uverbs.QPInit{
		Type: uverbs.RC, SendCQ: p.CQ, RecvCQ: p.CQ,
		Cap: uverbs.QPCap{MaxSendWR: 1, MaxRecvWR: o.RxDepth, MaxSendSGE: 1, MaxRecvSGE: 1},
	})
	if err != nil {
		return nil, fmt.Errorf("Couldn't create QP (%v)", err)
	}
	sendFlags := uverbs.SendSignaled
	if p.qp.Cap().MaxInlineData >= o.Size {
		sendFlags |= uverbs.SendInline
	}
	if err = p.qp.Init(uint8(o.IBPort), 0); err != nil {
		return nil, fmt.Errorf("Failed to modify QP to INIT (%v)", err)
	}

	sge := []uverbs.SGE{{Addr: p.MR.Addr(), Length: uint32(o.Size), LKey: p.MR.LKey()}}
	p.recvs = make([]uverbs.RecvWR, o.RxDepth)
	for i := range p.recvs {
		p.recvs[i] = uverbs.RecvWR{ID: pingpong.RecvWRID, SGE: sge}
	}
	p.send = []uverbs.SendWR{{ID: pingpong.SendWRID, Opcode: uverbs.WRSend, Flags: sendFlags, SGE: sge}}
	return p, nil
}

// connect is pp_connect_ctx: RTR towards rem, then RTS.
func (p *ppContext) connect(o *pingpong.Options, myPSN uint32, rem pingpong.Dest) error {
	err := p.qp.ConnectRC(uverbs.RCPath{
		Port: uint8(o.IBPort), MTU: o.MTU, SL: uint8(o.SL), SGIDIndex: uint8(o.GIDIdx),
		// C tests gid.global.interface_id, the GID's last 8 bytes.
		Global: [8]byte(rem.GID[8:]) != [8]byte{}, DGID: rem.GID, DLID: rem.LID,
		DestQPN: rem.QPN, DestPSN: rem.PSN, PSN: myPSN, RdAtomic: 1,
	})
	if te, ok := errors.AsType[*uverbs.TransitionError](err); ok {
		return fmt.Errorf("Failed to modify QP to %s (%v)", te.State, te.Err)
	}
	return err
}

// postRecv is pp_post_recv: it posts n receives of the whole buffer and
// returns how many it posted.
func (p *ppContext) postRecv(n int) int {
	posted, _ := p.qp.PostRecv(p.recvs[:n])
	return posted
}

// postSend is pp_post_send: one send of the whole buffer on the one QP.
func (p *ppContext) postSend(int) error {
	_, err := p.qp.PostSend(p.send)
	return err
}

// close is pp_close_ctx; it releases what exists, in the kernel's order,
// and returns the first failure as the C tool words it.
func (p *ppContext) close() error {
	var c pingpong.Closer
	c.Step(p.qp != nil, func() error { return p.qp.Close() }, "Couldn't destroy QP")
	p.Base.Close(&c, nil)
	return c.Err()
}

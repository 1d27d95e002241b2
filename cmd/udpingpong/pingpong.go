package main

import (
	"fmt"

	"github.com/purerdma/purerdma/cmd/internal/pingpong"
	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/uverbs"
)

// ppContext holds the verbs objects (struct pingpong_context). Its
// buffer starts with a GRH's room, then the message.
type ppContext struct {
	pingpong.Base
	qp     *uverbs.QP
	ah     *uverbs.AH // to the peer; replaced by one from its first datagram
	oldAH  *uverbs.AH // the one from the exchange, once replaced
	fromWC bool       // ah was made from a received datagram
	remQPN uint32
	port   uint8

	recvs []uverbs.RecvWR // rxDepth identical receives
	send  []uverbs.SendWR // one send
}

// qkey is the QKey both sides use, as the C tool.
const qkey = 0x11111111

// newPingpong is pp_init_ctx: it opens the device, checks the message
// fits the port's MTU, and makes the channel, PD, buffer, MR, CQ and UD
// QP, and moves the QP to INIT. On error everything made is released.
func newPingpong(o *pingpong.Options) (_ *ppContext, err error) {
	p := &ppContext{port: uint8(o.IBPort)}
	if p.Ctx, err = pingpong.OpenDevice(o.IBDev); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	pa, err := p.Ctx.QueryPort(p.port)
	if err != nil {
		return nil, fmt.Errorf("Unable to query port info for port %d (%v)", o.IBPort, err)
	}
	// C computes 1 << (active_mtu + 7) whatever the code.
	if mtu := 1 << (int(pa.ActiveMTU) + 7); o.Size > mtu {
		return nil, fmt.Errorf("Requested size larger than port MTU (%d)", mtu)
	}
	if err = p.Alloc(o.Events, o.Size+uverbs.GRHSize, o.RxDepth+1); err != nil {
		return nil, err
	}
	for i := range p.Buf {
		p.Buf[i] = 0x7b // as the C tool does
	}
	p.qp, err = p.PD.CreateQP(uverbs.QPInit{
		Type: uverbs.UD, SendCQ: p.CQ, RecvCQ: p.CQ,
		Cap: uverbs.QPCap{MaxSendWR: 1, MaxRecvWR: o.RxDepth, MaxSendSGE: 1, MaxRecvSGE: 1},
	})
	if err != nil {
		return nil, fmt.Errorf("Couldn't create QP (%v)", err)
	}
	sendFlags := uverbs.SendSignaled
	if p.qp.Cap().MaxInlineData >= o.Size {
		sendFlags |= uverbs.SendInline
	}
	init := uverbs.QPAttr{State: uverbs.QPSInit, Port: p.port, QKey: qkey}
	if err = p.qp.Modify(&init, uverbs.QPAttrState|uverbs.QPAttrPKeyIndex|uverbs.QPAttrPort|uverbs.QPAttrQKey); err != nil {
		return nil, fmt.Errorf("Failed to modify QP to INIT (%v)", err)
	}

	// Receives take the whole buffer, GRH room included; sends the
	// message after it.
	rsge := []uverbs.SGE{{Addr: p.MR.Addr(), Length: uint32(o.Size + uverbs.GRHSize), LKey: p.MR.LKey()}}
	p.recvs = make([]uverbs.RecvWR, o.RxDepth)
	for i := range p.recvs {
		p.recvs[i] = uverbs.RecvWR{ID: pingpong.RecvWRID, SGE: rsge}
	}
	sge := []uverbs.SGE{{Addr: p.MR.Addr() + uverbs.GRHSize, Length: uint32(o.Size), LKey: p.MR.LKey()}}
	p.send = []uverbs.SendWR{{ID: pingpong.SendWRID, Opcode: uverbs.WRSend, Flags: sendFlags, SGE: sge, RemoteQKey: qkey}}
	return p, nil
}

// connect is pp_connect_ctx: RTR, RTS, and the address handle to rem,
// global when rem has a GID (its interface ID, the last 8 bytes, is not
// zero).
func (p *ppContext) connect(o *pingpong.Options, myPSN uint32, rem pingpong.Dest) error {
	rtr := uverbs.QPAttr{State: uverbs.QPSRTR}
	if err := p.qp.Modify(&rtr, uverbs.QPAttrState); err != nil {
		return fmt.Errorf("Failed to modify QP to RTR (%v)", err)
	}
	rts := uverbs.QPAttr{State: uverbs.QPSRTS, SQPSN: myPSN}
	if err := p.qp.Modify(&rts, uverbs.QPAttrState|uverbs.QPAttrSQPSN); err != nil {
		return fmt.Errorf("Failed to modify QP to RTS (%v)", err)
	}
	attr := uverbs.AHAttr{DLID: rem.LID, SL: uint8(o.SL), Port: p.port}
	if [8]byte(rem.GID[8:]) != [8]byte{} {
		attr.IsGlobal = true
		attr.GRH = uverbs.GlobalRoute{HopLimit: 1, DGID: rem.GID, SGIDIndex: uint8(o.GIDIdx)}
	}
	ah, err := p.PD.CreateAH(attr)
	if err != nil {
		return fmt.Errorf("Failed to create AH (%v)", err)
	}
	p.ah, p.remQPN = ah, rem.QPN
	p.send[0].AH, p.send[0].RemoteQPN = ah, rem.QPN
	return nil
}

// replyTo switches the replies to an address made from the received
// datagram wc, whose GRH is at the start of the buffer: the peer the
// exchange named, now reached as ibv_create_ah_from_wc would. Only the
// first datagram does it; the others come from the same peer.
func (p *ppContext) replyTo(wc *cq.WC) error {
	if p.fromWC || wc.SrcQP != p.remQPN {
		return nil
	}
	attr, err := p.Ctx.AHAttrFromWC(p.port, wc.Addr(), p.Buf[:uverbs.GRHSize])
	if err != nil {
		return fmt.Errorf("Failed to create AH from WC (%v)", err)
	}
	ah, err := p.PD.CreateAH(attr)
	if err != nil {
		return fmt.Errorf("Failed to create AH from WC (%v)", err)
	}
	// The old AH may still be in a posted send: keep it until close.
	p.oldAH, p.ah, p.fromWC = p.ah, ah, true
	p.send[0].AH = ah
	return nil
}

// postRecv is pp_post_recv: it posts n receives of the whole buffer and
// returns how many it posted.
func (p *ppContext) postRecv(n int) int {
	posted, _ := p.qp.PostRecv(p.recvs[:n])
	return posted
}

// postSend is pp_post_send: one datagram of the message on the one QP.
func (p *ppContext) postSend(int) error {
	_, err := p.qp.PostSend(p.send)
	return err
}

// close is pp_close_ctx; it releases what exists, in the kernel's order,
// and returns the first failure as the C tool words it.
func (p *ppContext) close() error {
	var c pingpong.Closer
	c.Step(p.qp != nil, func() error { return p.qp.Close() }, "Couldn't destroy QP")
	p.Base.Close(&c, func() {
		c.Step(p.ah != nil, func() error { return p.ah.Close() }, "Couldn't destroy AH")
		c.Step(p.oldAH != nil, func() error { return p.oldAH.Close() }, "Couldn't destroy AH")
	})
	return c.Err()
}

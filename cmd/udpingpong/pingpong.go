package main

import (
	"errors"
	"fmt"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/pingpong"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// Work request IDs; the pending mask is made of them.
const (
	recvWRID = 1
	sendWRID = 2
)

// ppContext holds the verbs objects (struct pingpong_context).
type ppContext struct {
	ctx       *uverbs.Context
	ch        *cq.Channel // nil without -e
	pd        *uverbs.PD
	buf       []byte // from mr.Alloc: a GRH's room, then the message
	mr        *mr.MR
	cq        *cq.CQ
	qp        *uverbs.QP
	ah        *uverbs.AH // to the peer; replaced by one from its first datagram
	oldAH     *uverbs.AH // the one from the exchange, once replaced
	fromWC    bool       // ah was made from a received datagram
	remQPN    uint32
	port      uint8
	size      int
	rxDepth   int
	sendFlags uverbs.SendFlags
	pending   int
	portinfo  uverbs.PortAttr

	sge   []uverbs.SGE
	recvs []uverbs.RecvWR // rxDepth identical receives
	send  []uverbs.SendWR // one send
}

// qkey is the QKey both sides use, as the C tool.
const qkey = 0x11111111

// openDevice finds the device as ibv_ud_pingpong does: by name, or the
// first one.
func openDevice(name string) (*uverbs.Context, error) {
	devs, err := uverbs.Devices()
	if err != nil {
		return nil, fmt.Errorf("Failed to get IB devices list: %v", err)
	}
	var dev *uverbs.Device
	for i := range devs {
		if name == "" || devs[i].Name == name {
			dev = &devs[i]
			break
		}
	}
	switch {
	case dev == nil && name == "":
		return nil, errors.New("No IB devices found")
	case dev == nil:
		return nil, fmt.Errorf("IB device %s not found", name)
	}
	c, err := uverbs.Open(*dev)
	if err != nil {
		return nil, fmt.Errorf("Couldn't get context for %s (%v)", dev.Name, err)
	}
	return c, nil
}

// newPingpong is pp_init_ctx: it opens the device, checks the message
// fits the port's MTU, and makes the channel, PD, buffer, MR, CQ and UD
// QP, and moves the QP to INIT. On error everything made is released.
func newPingpong(o *options) (_ *ppContext, err error) {
	p := &ppContext{size: o.size, rxDepth: o.rxDepth, sendFlags: uverbs.SendSignaled, port: uint8(o.ibPort)}
	if p.ctx, err = openDevice(o.ibDev); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	pa, err := p.ctx.QueryPort(p.port)
	if err != nil {
		return nil, fmt.Errorf("Unable to query port info for port %d (%v)", o.ibPort, err)
	}
	// C computes 1 << (active_mtu + 7) whatever the code.
	if mtu := 1 << (int(pa.ActiveMTU) + 7); o.size > mtu {
		return nil, fmt.Errorf("Requested size larger than port MTU (%d)", mtu)
	}
	if o.events {
		if p.ch, err = cq.NewChannel(p.ctx); err != nil {
			return nil, fmt.Errorf("Couldn't create completion channel (%v)", err)
		}
	}
	if p.pd, err = p.ctx.AllocPD(); err != nil {
		return nil, fmt.Errorf("Couldn't allocate PD (%v)", err)
	}
	if p.buf, err = mr.Alloc(o.size + uverbs.GRHSize); err != nil {
		return nil, fmt.Errorf("Couldn't allocate work buf. (%v)", err)
	}
	for i := range p.buf {
		p.buf[i] = 0x7b // as the C tool does
	}
	if p.mr, err = mr.Register(p.pd, p.buf, uverbs.LocalWrite); err != nil {
		return nil, fmt.Errorf("Couldn't register MR (%v)", err)
	}
	var opts *cq.Options
	if p.ch != nil {
		opts = &cq.Options{Channel: p.ch}
	}
	if p.cq, err = cq.New(p.ctx, o.rxDepth+1, opts); err != nil {
		return nil, fmt.Errorf("Couldn't create CQ (%v)", err)
	}
	p.qp, err = p.pd.CreateQP(uverbs.QPInit{
		Type: uverbs.UD, SendCQ: p.cq, RecvCQ: p.cq,
		Cap: uverbs.QPCap{MaxSendWR: 1, MaxRecvWR: o.rxDepth, MaxSendSGE: 1, MaxRecvSGE: 1},
	})
	if err != nil {
		return nil, fmt.Errorf("Couldn't create QP (%v)", err)
	}
	if p.qp.Cap().MaxInlineData >= o.size {
		p.sendFlags |= uverbs.SendInline
	}
	init := uverbs.QPAttr{State: uverbs.QPSInit, Port: p.port, QKey: qkey}
	if err = p.qp.Modify(&init, uverbs.QPAttrState|uverbs.QPAttrPKeyIndex|uverbs.QPAttrPort|uverbs.QPAttrQKey); err != nil {
		return nil, fmt.Errorf("Failed to modify QP to INIT (%v)", err)
	}

	// Receives take the whole buffer, GRH room included; sends the
	// message after it.
	rsge := []uverbs.SGE{{Addr: p.mr.Addr(), Length: uint32(o.size + uverbs.GRHSize), LKey: p.mr.LKey()}}
	p.recvs = make([]uverbs.RecvWR, o.rxDepth)
	for i := range p.recvs {
		p.recvs[i] = uverbs.RecvWR{ID: recvWRID, SGE: rsge}
	}
	p.sge = []uverbs.SGE{{Addr: p.mr.Addr() + uverbs.GRHSize, Length: uint32(o.size), LKey: p.mr.LKey()}}
	p.send = []uverbs.SendWR{{ID: sendWRID, Opcode: uverbs.WRSend, Flags: p.sendFlags, SGE: p.sge, RemoteQKey: qkey}}
	return p, nil
}

// connect is pp_connect_ctx: RTR, RTS, and the address handle to rem,
// global when rem has a GID (its interface ID, the last 8 bytes, is not
// zero).
func (p *ppContext) connect(o *options, myPSN uint32, rem pingpong.Dest) error {
	rtr := uverbs.QPAttr{State: uverbs.QPSRTR}
	if err := p.qp.Modify(&rtr, uverbs.QPAttrState); err != nil {
		return fmt.Errorf("Failed to modify QP to RTR (%v)", err)
	}
	rts := uverbs.QPAttr{State: uverbs.QPSRTS, SQPSN: myPSN}
	if err := p.qp.Modify(&rts, uverbs.QPAttrState|uverbs.QPAttrSQPSN); err != nil {
		return fmt.Errorf("Failed to modify QP to RTS (%v)", err)
	}
	attr := uverbs.AHAttr{DLID: rem.LID, SL: uint8(o.sl), Port: p.port}
	if [8]byte(rem.GID[8:]) != [8]byte{} {
		attr.IsGlobal = true
		attr.GRH = uverbs.GlobalRoute{HopLimit: 1, DGID: rem.GID, SGIDIndex: uint8(o.gidIdx)}
	}
	ah, err := p.pd.CreateAH(attr)
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
	attr, err := p.ctx.AHAttrFromWC(p.port, wc.Addr(), p.buf[:uverbs.GRHSize])
	if err != nil {
		return fmt.Errorf("Failed to create AH from WC (%v)", err)
	}
	ah, err := p.pd.CreateAH(attr)
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

// postSend is pp_post_send: one datagram of the message.
func (p *ppContext) postSend() error {
	_, err := p.qp.PostSend(p.send)
	return err
}

// localGID is ibv_query_gid: the GID at index, zero for an empty entry,
// and an error for an index outside the table.
func (p *ppContext) localGID(port uint8, index int) (uverbs.GID, error) {
	if index >= p.portinfo.GIDTblLen {
		return uverbs.GID{}, fmt.Errorf("index %d, the table has %d entries", index, p.portinfo.GIDTblLen)
	}
	ents, err := p.ctx.GIDTable(port)
	if err != nil {
		return uverbs.GID{}, err
	}
	for _, e := range ents {
		if e.Index == index {
			return e.GID, nil
		}
	}
	return uverbs.GID{}, nil
}

// close is pp_close_ctx; it releases what exists, in the kernel's order,
// and returns the first failure as the C tool words it.
func (p *ppContext) close() error {
	var first error
	step := func(ok bool, f func() error, msg string) {
		if !ok {
			return
		}
		if err := f(); err != nil && first == nil {
			first = fmt.Errorf("%s (%v)", msg, err)
		}
	}
	step(p.qp != nil, func() error { return p.qp.Close() }, "Couldn't destroy QP")
	step(p.cq != nil, func() error { return p.cq.Close() }, "Couldn't destroy CQ")
	step(p.mr != nil, func() error { return p.mr.Close() }, "Couldn't deregister MR")
	step(p.ah != nil, func() error { return p.ah.Close() }, "Couldn't destroy AH")
	step(p.oldAH != nil, func() error { return p.oldAH.Close() }, "Couldn't destroy AH")
	step(p.buf != nil, func() error { return mr.Free(p.buf) }, "Couldn't free work buf")
	step(p.pd != nil, func() error { return p.pd.Close() }, "Couldn't deallocate PD")
	step(p.ch != nil, func() error { return p.ch.Close() }, "Couldn't destroy completion channel")
	step(p.ctx != nil, func() error { return p.ctx.Close() }, "Couldn't release context")
	return first
}

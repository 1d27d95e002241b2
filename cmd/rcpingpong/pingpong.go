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
	buf       []byte // from mr.Alloc
	mr        *mr.MR
	cq        *cq.CQ
	qp        *uverbs.QP
	size      int
	rxDepth   int
	sendFlags uverbs.SendFlags
	pending   int
	portinfo  uverbs.PortAttr

	sge   []uverbs.SGE
	recvs []uverbs.RecvWR // rxDepth identical receives
	send  []uverbs.SendWR // one send
}

// openDevice finds the device as ibv_rc_pingpong does: by name, or the
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

// newPingpong is pp_init_ctx: it opens the device and makes the channel,
// PD, buffer, MR, CQ and QP, and moves the QP to INIT. On error
// everything made is released.
func newPingpong(o *options) (_ *ppContext, err error) {
	p := &ppContext{size: o.size, rxDepth: o.rxDepth, sendFlags: uverbs.SendSignaled}
	if p.ctx, err = openDevice(o.ibDev); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	if o.events {
		if p.ch, err = cq.NewChannel(p.ctx); err != nil {
			return nil, fmt.Errorf("Couldn't create completion channel (%v)", err)
		}
	}
	if p.pd, err = p.ctx.AllocPD(); err != nil {
		return nil, fmt.Errorf("Couldn't allocate PD (%v)", err)
	}
	if p.buf, err = mr.Alloc(o.size); err != nil {
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
		Type: uverbs.RC, SendCQ: p.cq, RecvCQ: p.cq,
		Cap: uverbs.QPCap{MaxSendWR: 1, MaxRecvWR: o.rxDepth, MaxSendSGE: 1, MaxRecvSGE: 1},
	})
	if err != nil {
		return nil, fmt.Errorf("Couldn't create QP (%v)", err)
	}
	if p.qp.Cap().MaxInlineData >= o.size {
		p.sendFlags |= uverbs.SendInline
	}
	if err = p.qp.Init(uint8(o.ibPort), 0); err != nil {
		return nil, fmt.Errorf("Failed to modify QP to INIT (%v)", err)
	}

	p.sge = []uverbs.SGE{{Addr: p.mr.Addr(), Length: uint32(o.size), LKey: p.mr.LKey()}}
	p.recvs = make([]uverbs.RecvWR, o.rxDepth)
	for i := range p.recvs {
		p.recvs[i] = uverbs.RecvWR{ID: recvWRID, SGE: p.sge}
	}
	p.send = []uverbs.SendWR{{ID: sendWRID, Opcode: uverbs.WRSend, Flags: p.sendFlags, SGE: p.sge}}
	return p, nil
}

// connect is pp_connect_ctx: RTR towards rem, then RTS.
func (p *ppContext) connect(o *options, myPSN uint32, rem pingpong.Dest) error {
	err := p.qp.ConnectRC(uverbs.RCPath{
		Port: uint8(o.ibPort), MTU: o.mtu, SL: uint8(o.sl), SGIDIndex: uint8(o.gidIdx),
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

// postSend is pp_post_send: one send of the whole buffer.
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
	step(p.buf != nil, func() error { return mr.Free(p.buf) }, "Couldn't free work buf")
	step(p.pd != nil, func() error { return p.pd.Close() }, "Couldn't deallocate PD")
	step(p.ch != nil, func() error { return p.ch.Close() }, "Couldn't destroy completion channel")
	step(p.ctx != nil, func() error { return p.ctx.Close() }, "Couldn't release context")
	return first
}

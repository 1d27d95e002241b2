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
	srq       *uverbs.SRQ
	qps       []*uverbs.QP
	size      int
	rxDepth   int
	sendFlags uverbs.SendFlags
	pending   []int // per QP
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

// maxQP is MAX_QP: the C tool's QP array, and how many addresses each
// side sends in the exchange whatever -q says.
const maxQP = 256

// newPingpong is pp_init_ctx: it opens the device and makes the channel,
// PD, buffer, MR, CQ, SRQ and QPs, and moves the QPs to INIT. On error
// everything made is released.
func newPingpong(o *options) (_ *ppContext, err error) {
	p := &ppContext{size: o.size, rxDepth: o.rxDepth, sendFlags: uverbs.SendSignaled, pending: make([]int, o.numQP)}
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
	if p.buf, err = mr.Alloc(o.size); err != nil { // zeroed, as C's memset
		return nil, fmt.Errorf("Couldn't allocate work buf. (%v)", err)
	}
	if p.mr, err = mr.Register(p.pd, p.buf, uverbs.LocalWrite); err != nil {
		return nil, fmt.Errorf("Couldn't register MR (%v)", err)
	}
	var opts *cq.Options
	if p.ch != nil {
		opts = &cq.Options{Channel: p.ch}
	}
	if p.cq, err = cq.New(p.ctx, o.rxDepth+o.numQP, opts); err != nil {
		return nil, fmt.Errorf("Couldn't create CQ (%v)", err)
	}
	if p.srq, err = p.pd.CreateSRQ(uverbs.SRQInit{MaxWR: o.rxDepth, MaxSGE: 1}); err != nil {
		return nil, fmt.Errorf("Couldn't create SRQ (%v)", err)
	}
	for i := range o.numQP {
		qp, err := p.pd.CreateQP(uverbs.QPInit{
			Type: uverbs.RC, SendCQ: p.cq, RecvCQ: p.cq, SRQ: p.srq,
			Cap: uverbs.QPCap{MaxSendWR: 1, MaxSendSGE: 1},
		})
		if err != nil {
			return nil, fmt.Errorf("Couldn't create QP[%d] (%v)", i, err)
		}
		p.qps = append(p.qps, qp)
		if qp.Cap().MaxInlineData >= o.size {
			p.sendFlags |= uverbs.SendInline
		}
	}
	for i, qp := range p.qps {
		if err = qp.Init(uint8(o.ibPort), 0); err != nil {
			return nil, fmt.Errorf("Failed to modify QP[%d] to INIT (%v)", i, err)
		}
	}

	p.sge = []uverbs.SGE{{Addr: p.mr.Addr(), Length: uint32(o.size), LKey: p.mr.LKey()}}
	p.recvs = make([]uverbs.RecvWR, o.rxDepth)
	for i := range p.recvs {
		p.recvs[i] = uverbs.RecvWR{ID: recvWRID, SGE: p.sge}
	}
	p.send = []uverbs.SendWR{{ID: sendWRID, Opcode: uverbs.WRSend, Flags: p.sendFlags, SGE: p.sge}}
	return p, nil
}

// connect is pp_connect_ctx: each QP to RTR towards its peer, then RTS.
// As in C, whether the route is global, and the GID it goes to, come from
// the peer's first address.
func (p *ppContext) connect(o *options, my, rem []pingpong.Dest) error {
	for i, qp := range p.qps {
		err := qp.ConnectRC(uverbs.RCPath{
			Port: uint8(o.ibPort), MTU: o.mtu, SL: uint8(o.sl), SGIDIndex: uint8(o.gidIdx),
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

// findQP is find_qp: the index of the QP numbered qpn, or -1.
func (p *ppContext) findQP(qpn uint32) int {
	for i, qp := range p.qps {
		if qp.Num() == qpn {
			return i
		}
	}
	return -1
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
	for i, qp := range p.qps {
		step(true, qp.Close, fmt.Sprintf("Couldn't destroy QP[%d]", i))
	}
	step(p.srq != nil, func() error { return p.srq.Close() }, "Couldn't destroy SRQ")
	step(p.cq != nil, func() error { return p.cq.Close() }, "Couldn't destroy CQ")
	step(p.mr != nil, func() error { return p.mr.Close() }, "Couldn't deregister MR")
	step(p.buf != nil, func() error { return mr.Free(p.buf) }, "Couldn't free work buf")
	step(p.pd != nil, func() error { return p.pd.Close() }, "Couldn't deallocate PD")
	step(p.ch != nil, func() error { return p.ch.Close() }, "Couldn't destroy completion channel")
	step(p.ctx != nil, func() error { return p.ctx.Close() }, "Couldn't release context")
	return first
}

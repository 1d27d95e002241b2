package main

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/perftest"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// res holds the verbs objects of one side (perftest's pingpong_context).
// The buffer has two halves of maxSize bytes: the first is what this side
// sends, reads into or fetches into; the second is what the peer writes,
// reads or adds to.
type res struct {
	ctx     *uverbs.Context
	pd      *uverbs.PD
	buf     []byte
	mr      *mr.MR
	scq     *cq.CQ
	rcq     *cq.CQ
	qp      *uverbs.QP
	port    uverbs.PortAttr
	gidIdx  int
	gid     uverbs.GID
	half    int // maxSize: the offset of the second half
	inline  int // the QP's inline limit
	rdAtom  int // outstanding reads and atomics
	rxDepth int
}

// rxDepthSend is perftest's DEF_RX_SEND.
const rxDepthSend = 512

func openDevice(name string) (*uverbs.Context, error) {
	devs, err := uverbs.Devices()
	if err != nil {
		return nil, fmt.Errorf("failed to get IB devices list: %v", err)
	}
	for _, d := range devs {
		if name == "" || d.Name == name {
			c, err := uverbs.Open(d)
			if err != nil {
				return nil, fmt.Errorf("couldn't open %s: %v", d.Name, err)
			}
			return c, nil
		}
	}
	if name == "" {
		return nil, errors.New("no IB devices found")
	}
	return nil, fmt.Errorf("IB device %s not found", name)
}

// newRes makes the objects and moves the QP to INIT.
func newRes(o *options) (_ *res, err error) {
	r := &res{half: o.maxSize()}
	if r.ctx, err = openDevice(o.dev); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	if r.port, err = r.ctx.QueryPort(uint8(o.ibPort)); err != nil {
		return nil, fmt.Errorf("couldn't query port %d: %v", o.ibPort, err)
	}
	if err = r.pickGID(o); err != nil {
		return nil, err
	}
	dev, err := r.ctx.QueryDevice()
	if err != nil {
		return nil, fmt.Errorf("couldn't query the device: %v", err)
	}
	r.rdAtom = min(16, dev.MaxQPRdAtom, dev.MaxQPInitRdAtom)
	if r.rdAtom < 1 {
		r.rdAtom = 1
	}
	if r.pd, err = r.ctx.AllocPD(); err != nil {
		return nil, fmt.Errorf("couldn't allocate PD: %v", err)
	}
	if r.buf, err = mr.Alloc(2 * r.half); err != nil {
		return nil, fmt.Errorf("couldn't allocate the buffer: %v", err)
	}
	if r.mr, err = mr.Register(r.pd, r.buf, uverbs.LocalWrite|uverbs.RemoteWrite|uverbs.RemoteRead|uverbs.RemoteAtomic); err != nil {
		return nil, fmt.Errorf("couldn't register MR: %v", err)
	}
	t := perftest.Tests[o.test]
	sq := o.txDepth
	if t.Lat {
		sq = 128 // send_lat leaves up to cqMod sends unsignaled
	}
	r.rxDepth = 1
	if t.Name == "send_lat" || t.Name == "send_bw" {
		r.rxDepth = min(rxDepthSend, max(o.iters, 1))
	}
	if r.scq, err = cq.New(r.ctx, sq+1, nil); err != nil {
		return nil, fmt.Errorf("couldn't create CQ: %v", err)
	}
	if r.rcq, err = cq.New(r.ctx, r.rxDepth+1, nil); err != nil {
		return nil, fmt.Errorf("couldn't create CQ: %v", err)
	}
	init := uverbs.QPInit{
		Type: uverbs.RC, SendCQ: r.scq, RecvCQ: r.rcq,
		Cap: uverbs.QPCap{MaxSendWR: sq, MaxRecvWR: r.rxDepth, MaxSendSGE: 1, MaxRecvSGE: 1},
	}
	init.Cap.MaxInlineData = inlineSize(o, r.ctx.Device().Driver)
	if r.qp, err = r.pd.CreateQP(init); err != nil && init.Cap.MaxInlineData > 0 {
		init.Cap.MaxInlineData = 0
		r.qp, err = r.pd.CreateQP(init)
	}
	if err != nil {
		return nil, fmt.Errorf("couldn't create QP: %v", err)
	}
	r.inline = min(r.qp.Cap().MaxInlineData, init.Cap.MaxInlineData)
	if err = r.qp.Init(uint8(o.ibPort), uverbs.RemoteWrite|uverbs.RemoteRead|uverbs.RemoteAtomic); err != nil {
		return nil, fmt.Errorf("failed to modify QP to INIT: %v", err)
	}
	return r, nil
}

// inlineSize is perftest's ctx_set_max_inline: -I when given, else for
// the latency tests of write and send the Mellanox defaults on the devices
// perftest knows (only mlx4, mlx5 and mthca here), and no inline data
// elsewhere: perftest does not recognize rxe and siw and disables it.
func inlineSize(o *options, drv uverbs.Driver) int {
	if o.inline >= 0 {
		return o.inline
	}
	switch drv {
	case uverbs.DriverMLX5, uverbs.DriverMLX4, uverbs.DriverMTHCA:
	default:
		return 0
	}
	switch perftest.Tests[o.test].Name {
	case "write_lat":
		return 220 // DEF_INLINE_WRITE
	case "send_lat":
		return 236 // DEF_INLINE_SEND_RC_UC_XRC
	}
	return 0
}

// pickGID sets the local GID: -x's index, or else the RoCE v2 entry of an
// IPv4 address, or else index 0.
func (r *res) pickGID(o *options) error {
	ents, err := r.ctx.GIDTable(uint8(o.ibPort))
	if err != nil {
		return fmt.Errorf("couldn't read the GID table: %v", err)
	}
	r.gidIdx = o.gidIdx
	if r.gidIdx < 0 {
		r.gidIdx = 0
		for _, e := range ents {
			if e.Type == uverbs.GIDTypeRoCEv2 && netip.AddrFrom16(e.GID).Is4In6() {
				r.gidIdx = e.Index
				break
			}
		}
	}
	for _, e := range ents {
		if e.Index == r.gidIdx {
			r.gid = e.GID
		}
	}
	if r.port.LinkLayer == uverbs.LinkLayerEthernet && r.gid.IsZero() {
		return fmt.Errorf("no GID at index %d", r.gidIdx)
	}
	return nil
}

// connect moves the QP to RTR towards rem and then to RTS.
func (r *res) connect(o *options, myPSN uint32, rem dest) error {
	err := r.qp.ConnectRC(uverbs.RCPath{
		Port: uint8(o.ibPort), MTU: r.port.ActiveMTU, SGIDIndex: uint8(r.gidIdx),
		Global: !rem.gid.IsZero(), DGID: rem.gid, DLID: rem.lid,
		DestQPN: rem.qpn, DestPSN: rem.psn, PSN: myPSN, RdAtomic: uint8(r.rdAtom),
	})
	if te, ok := errors.AsType[*uverbs.TransitionError](err); ok {
		return fmt.Errorf("failed to modify QP to %s: %v", te.State, te.Err)
	}
	return err
}

// local returns the SGE of the first n bytes of the first half.
func (r *res) local(n int) uverbs.SGE {
	return uverbs.SGE{Addr: r.mr.Addr(), Length: uint32(n), LKey: r.mr.LKey()}
}

func (r *res) close() error {
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	if r.qp != nil {
		add(r.qp.Close())
	}
	if r.scq != nil {
		add(r.scq.Close())
	}
	if r.rcq != nil {
		add(r.rcq.Close())
	}
	if r.mr != nil {
		add(r.mr.Close())
	}
	if r.buf != nil {
		add(mr.Free(r.buf))
	}
	if r.pd != nil {
		add(r.pd.Close())
	}
	if r.ctx != nil {
		add(r.ctx.Close())
	}
	return errors.Join(errs...)
}

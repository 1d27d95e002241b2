package uverbs_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/internal/verbstest"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// rig is one device context with a PD, a CQ and a registered buffer.
type rig struct {
	ctx *uverbs.Context
	pd  *uverbs.PD
	cq  *cq.CQ
	ch  *cq.Channel
	buf []byte
	mr  *mr.MR
	gid int // the RoCE v2 GID index of the device's address
}

const rigAccess = uverbs.LocalWrite | uverbs.RemoteWrite | uverbs.RemoteRead | uverbs.RemoteAtomic

func newRig(t *testing.T, d testenv.Dev) *rig {
	t.Helper()
	r := &rig{}
	var err error
	if r.ctx, err = uverbs.OpenName(d.Name); err != nil {
		t.Fatalf("OpenName(%s): %v", d.Name, err)
	}
	t.Cleanup(func() { r.ctx.Close() })
	if r.pd, err = r.ctx.AllocPD(); err != nil {
		t.Fatalf("AllocPD: %v", err)
	}
	if r.ch, err = cq.NewChannel(r.ctx); err != nil {
		t.Fatalf("NewChannel: %v", err)
	}
	if r.cq, err = cq.New(r.ctx, 64, &cq.Options{Channel: r.ch}); err != nil {
		t.Fatalf("cq.New: %v", err)
	}
	if r.buf, err = mr.Alloc(1 << 16); err != nil {
		t.Fatalf("mr.Alloc: %v", err)
	}
	t.Cleanup(func() { mr.Free(r.buf) })
	if r.mr, err = mr.Register(r.pd, r.buf, rigAccess); err != nil {
		t.Fatalf("mr.Register: %v", err)
	}
	if d.RoCE() { // iWARP addresses by IP through rdma_cm
		if r.gid, err = r.ctx.GIDIndex(1, netip.MustParseAddr(d.Addr)); err != nil {
			t.Fatalf("GIDIndex(%s): %v", d.Addr, err)
		}
	}
	t.Cleanup(func() {
		// In the order the kernel requires; each must succeed.
		for _, c := range []interface{ Close() error }{r.mr, r.cq, r.ch, r.pd} {
			if err := c.Close(); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	return r
}

// sge returns an SGE for n bytes at off of the rig's buffer.
func (r *rig) sge(off, n int) uverbs.SGE {
	return uverbs.SGE{Addr: r.mr.Addr() + uint64(off), Length: uint32(n), LKey: r.mr.LKey()}
}

func (r *rig) qp(t *testing.T, typ uverbs.QPType, srq *uverbs.SRQ) *uverbs.QP {
	t.Helper()
	qp, err := r.pd.CreateQP(uverbs.QPInit{
		Type: typ, SendCQ: r.cq, RecvCQ: r.cq, SRQ: srq,
		Cap: uverbs.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 4, MaxRecvSGE: 4, MaxInlineData: 64},
	})
	if err != nil {
		t.Fatalf("CreateQP(%s): %v", typ, err)
	}
	t.Cleanup(func() {
		if err := qp.Close(); err != nil {
			t.Errorf("QP close: %v", err)
		}
	})
	return qp
}

// connect moves an RC QP to RTS towards the QP remote on the same device.
func (r *rig) connect(t *testing.T, qp *uverbs.QP, remote uint32) {
	t.Helper()
	r.connectAccess(t, qp, remote, rigAccess)
}

// connectAccess is connect with the QP's remote access flags.
func (r *rig) connectAccess(t *testing.T, qp *uverbs.QP, remote uint32, access uverbs.Access) {
	t.Helper()
	gids, err := r.ctx.GIDTable(1)
	if err != nil {
		t.Fatal(err)
	}
	var dgid uverbs.GID
	for _, e := range gids {
		if e.Index == r.gid {
			dgid = e.GID
		}
	}
	if err := qp.Init(1, access); err != nil {
		t.Fatalf("Init: %v", err)
	}
	err = qp.ConnectRC(uverbs.RCPath{
		Port: 1, MTU: uverbs.MTU1024, Global: true, DGID: dgid, SGIDIndex: uint8(r.gid), HopLimit: 64,
		DestQPN: remote, DestPSN: 0x1234, PSN: 0x1234, RdAtomic: 4,
	})
	if err != nil {
		t.Fatalf("ConnectRC: %v", err)
	}
}

// rcPair returns two connected RC QPs on one device and its rig.
func rcPair(t *testing.T, d testenv.Dev) (*rig, *uverbs.QP, *uverbs.QP) {
	t.Helper()
	r := newRig(t, d)
	a, b := r.qp(t, uverbs.RC, nil), r.qp(t, uverbs.RC, nil)
	r.connect(t, a, b.Num())
	r.connect(t, b, a.Num())
	return r, a, b
}

// poll waits for exactly n completions on the rig's CQ.
func (r *rig) poll(t *testing.T, n int) []cq.WC { return verbstest.Poll(t, r.cq, n) }

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

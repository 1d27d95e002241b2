package uverbs_test

import (
	"fmt"
	"net/netip"
	"syscall"
	"testing"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/internal/verbstest"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// TestBadInput passes bad arguments to every entry point of uverbs, cq and
// mr that takes any, on rxe and siw: each returns its sentinel, and the
// objects keep working (on rxe a loopback RDMA write completes after each
// case; siw's data path needs rdma_cm, so there the QP is queried).
func TestBadInput(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		r := newRig(t, d)
		attr, err := r.ctx.QueryDevice()
		if err != nil {
			t.Fatal(err)
		}
		srq, err := r.pd.CreateSRQ(uverbs.SRQInit{MaxWR: 8, MaxSGE: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srq.Close() })
		a, b := r.qp(t, uverbs.RC, nil), r.qp(t, uverbs.RC, nil)
		usable := func() error {
			_, err := a.Query(uverbs.QPAttrState)
			return err
		}
		if d.RoCE() {
			r.connect(t, a, b.Num())
			r.connect(t, b, a.Num())
			usable = func() error {
				_, err := a.PostSend([]uverbs.SendWR{{ID: 1, Opcode: uverbs.WRRDMAWrite, Flags: uverbs.SendSignaled,
					SGE: []uverbs.SGE{r.sge(0, 8)}, RemoteAddr: r.mr.Addr() + 64, RKey: r.mr.RKey()}})
				if err != nil {
					return err
				}
				wc, err := verbstest.PollOne(r.cq)
				if err != nil {
					return err
				}
				return wc.Err()
			}
		}
		other, err := uverbs.OpenName(d.Name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Close() })
		otherCh, err := cq.NewChannel(other)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { otherCh.Close() })

		createQP := func(edit func(*uverbs.QPInit)) func() error {
			return func() error {
				init := uverbs.QPInit{Type: uverbs.RC, SendCQ: r.cq, RecvCQ: r.cq,
					Cap: uverbs.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}}
				edit(&init)
				qp, err := r.pd.CreateQP(init)
				if err == nil {
					qp.Close()
				}
				return err
			}
		}
		createSRQ := func(init uverbs.SRQInit) func() error {
			return func() error {
				s, err := r.pd.CreateSRQ(init)
				if err == nil {
					s.Close()
				}
				return err
			}
		}
		newCQ := func(cqe int, opts *cq.Options) func() error {
			return func() error {
				c, err := cq.New(r.ctx, cqe, opts)
				if err == nil {
					c.Close()
				}
				return err
			}
		}
		register := func(access uverbs.Access) func() error {
			return func() error {
				m, err := mr.Register(r.pd, r.buf, access)
				if err == nil {
					m.Close()
				}
				return err
			}
		}
		post := func(wr uverbs.SendWR) func() error {
			return func() error {
				_, err := a.PostSend([]uverbs.SendWR{wr})
				return err
			}
		}
		addr := netip.MustParseAddr("192.0.2.1")
		if d.Addr != "" {
			addr = netip.MustParseAddr(d.Addr)
		}
		tooManySGEs := make([]uverbs.SGE, a.Cap().MaxSendSGE+1)
		// Without the Linux 6.2 operations (siw; rxe before 6.2) they
		// are refused as unsupported, after the checks of their
		// arguments, which are the same on every device.
		var noCaps []testenv.BadCase
		if attr.FlushTypes() == 0 {
			noCaps = append(noCaps,
				testenv.Bad("PostSend: flush on a device without it", syscall.EOPNOTSUPP, post(uverbs.SendWR{Opcode: uverbs.WRFlush,
					FlushType: uverbs.FlushGlobal, RemoteAddr: r.mr.Addr(), RKey: r.mr.RKey(), Length: 8})),
				testenv.Bad("mr.Register: flush access on a device without flush", syscall.EOPNOTSUPP, register(uverbs.LocalWrite|uverbs.AccessFlushGlobal)))
		}
		if !attr.AtomicWrite() {
			noCaps = append(noCaps,
				testenv.Bad("PostSend: atomic write on a device without it", syscall.EOPNOTSUPP, post(uverbs.SendWR{Opcode: uverbs.WRAtomicWrite,
					RemoteAddr: r.mr.Addr(), RKey: r.mr.RKey()})))
		}
		n := testenv.RunBad(t, usable, append(noCaps, []testenv.BadCase{
			testenv.Bad("QueryPort: port 0", uverbs.ErrInvalid, func() error { _, err := r.ctx.QueryPort(0); return err }),
			testenv.Bad("QueryPort: past the last port", uverbs.ErrInvalid, func() error { _, err := r.ctx.QueryPort(2); return err }),
			testenv.Bad("GIDTable: port 0", uverbs.ErrInvalid, func() error { _, err := r.ctx.GIDTable(0); return err }),
			testenv.Bad("GIDTable: past the last port", uverbs.ErrInvalid, func() error { _, err := r.ctx.GIDTable(2); return err }),
			testenv.Bad("GIDIndex: zero address", uverbs.ErrInvalid, func() error { _, err := r.ctx.GIDIndex(1, netip.Addr{}); return err }),
			testenv.Bad("GIDIndex: port 0", uverbs.ErrInvalid, func() error { _, err := r.ctx.GIDIndex(0, addr); return err }),
			testenv.Bad("AHAttrFromWC: short GRH", uverbs.ErrInvalid, ahFromWC(r.ctx, 1, make([]byte, uverbs.GRHSize-1))),
			testenv.Bad("AHAttrFromWC: GRH neither IPv6 nor IPv4", syscall.EPROTONOSUPPORT, ahFromWC(r.ctx, 1, make([]byte, uverbs.GRHSize))),
			testenv.Bad("AHAttrFromWC: multicast destination", syscall.EINVAL, ahFromWC(r.ctx, 1, testGRH6(0xff, ipprotoUDP))),
			testenv.Bad("AHAttrFromWC: unknown next header", syscall.EPROTONOSUPPORT, ahFromWC(r.ctx, 1, testGRH6(0xfe, 6))),
			testenv.Bad("AHAttrFromWC: GID not in the table", uverbs.ErrNoGID, ahFromWC(r.ctx, 1, testGRH6(0xfe, ipprotoUDP))),
			testenv.Bad("AHAttrFromWC: port 0", uverbs.ErrInvalid, ahFromWC(r.ctx, 0, testGRH6(0xfe, ipprotoUDP))),

			testenv.Bad("CreateQP: unknown type", uverbs.ErrInvalid, createQP(func(i *uverbs.QPInit) { i.Type = 99 })),
			testenv.Bad("CreateQP: no send CQ", uverbs.ErrInvalid, createQP(func(i *uverbs.QPInit) { i.SendCQ = nil })),
			testenv.Bad("CreateQP: no receive CQ", uverbs.ErrInvalid, createQP(func(i *uverbs.QPInit) { i.RecvCQ = nil })),
			testenv.Bad("CreateQP: send queue past the device's maximum", uverbs.ErrInvalid, createQP(func(i *uverbs.QPInit) { i.Cap.MaxSendWR = attr.MaxQPWR + 1 })),
			testenv.Bad("CreateQP: receive queue past the device's maximum", uverbs.ErrInvalid, createQP(func(i *uverbs.QPInit) { i.Cap.MaxRecvWR = attr.MaxQPWR + 1 })),
			testenv.Bad("CreateQP: negative send queue", uverbs.ErrInvalid, createQP(func(i *uverbs.QPInit) { i.Cap.MaxSendWR = -1 })),
			testenv.Bad("CreateQP: SGEs past the device's maximum", uverbs.ErrInvalid, createQP(func(i *uverbs.QPInit) { i.Cap.MaxSendSGE = attr.MaxSGE + 1 })),
			testenv.Bad("CreateQP: inline data of 1 MiB", uverbs.ErrInvalid, createQP(func(i *uverbs.QPInit) { i.Cap.MaxInlineData = 1 << 20 })),
			testenv.Bad("CreateSRQ: 0 entries", uverbs.ErrInvalid, createSRQ(uverbs.SRQInit{MaxWR: 0, MaxSGE: 1})),
			testenv.Bad("CreateSRQ: past the device's maximum", uverbs.ErrInvalid, createSRQ(uverbs.SRQInit{MaxWR: attr.MaxSRQWR + 1, MaxSGE: 1})),
			testenv.Bad("CreateSRQ: SGEs past the device's maximum", uverbs.ErrInvalid, createSRQ(uverbs.SRQInit{MaxWR: 4, MaxSGE: attr.MaxSRQSGE + 1})),

			testenv.Bad("cq.New: 0 entries", uverbs.ErrInvalid, newCQ(0, nil)),
			testenv.Bad("cq.New: negative entries", uverbs.ErrInvalid, newCQ(-1, nil)),
			testenv.Bad("cq.New: past the device's maximum", uverbs.ErrInvalid, newCQ(attr.MaxCQE+1, nil)),
			testenv.Bad("cq.New: negative completion vector", uverbs.ErrInvalid, newCQ(1, &cq.Options{CompVector: -1})),
			testenv.Bad("cq.New: completion vector past the last", uverbs.ErrInvalid, newCQ(1, &cq.Options{CompVector: r.ctx.NumCompVectors()})),
			testenv.Bad("cq.New: another context's channel", uverbs.ErrInvalid, newCQ(1, &cq.Options{Channel: otherCh})),
			testenv.Bad("CQ.Resize: 0 entries", uverbs.ErrInvalid, func() error { return r.cq.Resize(0) }),
			testenv.Bad("CQ.Resize: negative entries", uverbs.ErrInvalid, func() error { return r.cq.Resize(-1) }),
			testenv.Bad("CQ.Completions: at most 0", uverbs.ErrInvalid, completionsErr(r.cq, 0)),
			testenv.Bad("CQ.Completions: at most -1", uverbs.ErrInvalid, completionsErr(r.cq, -1)),
			testenv.Bad("CQ.Completions: closed CQ", uverbs.ErrClosed, func() error {
				c, err := cq.New(r.ctx, 1, nil)
				if err != nil {
					return err
				}
				c.Close()
				return completionsErr(c, 1)()
			}),

			testenv.Bad("mr.Register: unknown access bit", uverbs.ErrInvalid, register(1<<30)),
			testenv.Bad("mr.Register: closed PD", uverbs.ErrClosed, func() error {
				pd, err := r.ctx.AllocPD()
				if err != nil {
					return err
				}
				pd.Close()
				m, err := mr.Register(pd, r.buf, uverbs.LocalWrite)
				if err == nil {
					m.Close()
				}
				return err
			}),

			testenv.Bad("MR.Reregister: no change", uverbs.ErrInvalid, func() error { return r.mr.Reregister(0, nil, nil, 0) }),
			testenv.Bad("MR.Reregister: unknown change", uverbs.ErrInvalid, func() error { return r.mr.Reregister(1<<3, nil, nil, 0) }),
			testenv.Bad("MR.Reregister: nil PD", uverbs.ErrInvalid, func() error { return r.mr.Reregister(mr.ChangePD, nil, nil, 0) }),
			testenv.Bad("MR.Reregister: another context's PD", uverbs.ErrInvalid, func() error {
				pd, err := other.AllocPD()
				if err != nil {
					return err
				}
				defer pd.Close()
				return r.mr.Reregister(mr.ChangePD, pd, nil, 0)
			}),
			testenv.Bad("MR.Reregister: closed PD", uverbs.ErrClosed, func() error {
				pd, err := r.ctx.AllocPD()
				if err != nil {
					return err
				}
				pd.Close()
				return r.mr.Reregister(mr.ChangePD, pd, nil, 0)
			}),
			testenv.Bad("MR.Reregister: remote write without local write", uverbs.ErrInvalid, func() error {
				return r.mr.Reregister(mr.ChangeAccess, nil, nil, uverbs.RemoteWrite)
			}),
			testenv.Bad("MR.Reregister: empty buffer", uverbs.ErrInvalid, func() error { return r.mr.Reregister(mr.ChangeBuffer, nil, nil, 0) }),
			testenv.Bad("MR.Reregister: Go memory", mr.ErrNotMapped, func() error {
				return r.mr.Reregister(mr.ChangeBuffer, nil, make([]byte, 4096), 0)
			}),

			testenv.Bad("AllocMW: type 0", uverbs.ErrInvalid, func() error { _, err := r.pd.AllocMW(0); return err }),
			testenv.Bad("AllocMW: type 3", uverbs.ErrInvalid, func() error { _, err := r.pd.AllocMW(3); return err }),
			testenv.Bad("PostSend: bind without a window", uverbs.ErrInvalid, post(uverbs.SendWR{Opcode: uverbs.WRBindMW})),

			testenv.Bad("PostSend: more SGEs than the QP takes", uverbs.ErrInvalid, post(uverbs.SendWR{Opcode: uverbs.WRSend, SGE: tooManySGEs})),
			testenv.Bad("PostSend: unknown opcode", uverbs.ErrInvalid, post(uverbs.SendWR{Opcode: 200})),
			testenv.Bad("PostSend: unknown flag", uverbs.ErrInvalid, post(uverbs.SendWR{Opcode: uverbs.WRSend, Flags: 1 << 20})),
			testenv.Bad("PostSend: inline past the QP's maximum", uverbs.ErrInvalid, post(uverbs.SendWR{Opcode: uverbs.WRSend, Flags: uverbs.SendInline,
				SGE: []uverbs.SGE{r.sge(0, a.Cap().MaxInlineData+1)}})),
			testenv.Bad("PostSend: atomic with a 4-byte SGE", uverbs.ErrInvalid, post(uverbs.SendWR{Opcode: uverbs.WRAtomicFetchAndAdd, SGE: []uverbs.SGE{r.sge(0, 4)}})),
			testenv.Bad("PostSend: atomic to an unaligned address", uverbs.ErrInvalid, post(uverbs.SendWR{Opcode: uverbs.WRAtomicCmpAndSwp, SGE: []uverbs.SGE{r.sge(0, 8)}, RemoteAddr: r.mr.Addr() + 4})),
			testenv.Bad("PostSend: flush with an SGE", uverbs.ErrInvalid, post(uverbs.SendWR{Opcode: uverbs.WRFlush, FlushType: uverbs.FlushGlobal, SGE: []uverbs.SGE{r.sge(0, 8)}})),
			testenv.Bad("PostSend: inline flush", uverbs.ErrInvalid, post(uverbs.SendWR{Opcode: uverbs.WRFlush, FlushType: uverbs.FlushGlobal, Flags: uverbs.SendInline})),
			testenv.Bad("PostSend: flush of no type", uverbs.ErrInvalid, post(uverbs.SendWR{Opcode: uverbs.WRFlush, RemoteAddr: r.mr.Addr()})),
			testenv.Bad("PostSend: flush of an unknown type", uverbs.ErrInvalid, post(uverbs.SendWR{Opcode: uverbs.WRFlush, FlushType: 4})),
			testenv.Bad("PostSend: flush of an unknown level", uverbs.ErrInvalid, post(uverbs.SendWR{Opcode: uverbs.WRFlush, FlushType: uverbs.FlushGlobal, FlushLevel: 2})),
			testenv.Bad("PostSend: atomic write with an SGE", uverbs.ErrInvalid, post(uverbs.SendWR{Opcode: uverbs.WRAtomicWrite, SGE: []uverbs.SGE{r.sge(0, 8)}})),
			testenv.Bad("PostSend: atomic write to an unaligned address", uverbs.ErrInvalid, post(uverbs.SendWR{Opcode: uverbs.WRAtomicWrite, RemoteAddr: r.mr.Addr() + 4})),
			testenv.Bad("PostRecv: more SGEs than the QP takes", uverbs.ErrInvalid, func() error {
				_, err := b.PostRecv([]uverbs.RecvWR{{SGE: make([]uverbs.SGE, b.Cap().MaxRecvSGE+1)}})
				return err
			}),
			testenv.Bad("Modify: nil attributes", uverbs.ErrInvalid, func() error { return a.Modify(nil, uverbs.QPAttrState) }),
			testenv.Bad("Modify: unknown mask bit", uverbs.ErrInvalid, func() error { return a.Modify(&uverbs.QPAttr{}, 1<<30) }),
			testenv.Bad("Modify: unknown state", uverbs.ErrInvalid, func() error { return a.Modify(&uverbs.QPAttr{State: 99}, uverbs.QPAttrState) }),
			testenv.Bad("SRQ.SetLimit: negative", uverbs.ErrInvalid, func() error { return srq.SetLimit(-1) }),
			testenv.Bad("SRQ.SetLimit: past its size", uverbs.ErrInvalid, func() error { return srq.SetLimit(srq.MaxWR() + 1) }),
			testenv.Bad("SRQ.PostRecv: more SGEs than it takes", uverbs.ErrInvalid, func() error {
				_, err := srq.PostRecv([]uverbs.RecvWR{{SGE: make([]uverbs.SGE, srq.MaxSGE()+1)}})
				return err
			}),
		}...))
		t.Logf("%d bad inputs tried on %s", n, d.Name)
	})
}

// TestClosedObjects calls every method of every uverbs, cq and mr object
// after its Close, and after its context's: each returns ErrClosed.
func TestClosedObjects(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		n := 0
		for _, closeCtxFirst := range []bool{false, true} {
			r := newRig(t, d)
			srq, err := r.pd.CreateSRQ(uverbs.SRQInit{MaxWR: 8, MaxSGE: 2})
			if err != nil {
				t.Fatal(err)
			}
			qp := r.qp(t, uverbs.RC, nil)
			var mw *uverbs.MW // rxe only: siw has no memory windows
			if d.Driver == "rxe" {
				if mw, err = r.pd.AllocMW(uverbs.MWType2); err != nil {
					t.Fatal(err)
				}
			}
			objs := []interface{ Close() error }{qp, srq, r.mr, r.cq, r.ch, r.pd, r.ctx}
			if mw != nil {
				objs = append([]interface{ Close() error }{mw}, objs...)
			}
			if closeCtxFirst {
				objs = objs[len(objs)-1:]
			}
			for _, o := range objs {
				if err := o.Close(); err != nil {
					t.Fatalf("%T.Close: %v", o, err)
				}
			}
			for _, o := range []any{qp, srq, r.mr, r.cq, r.ch, r.pd, r.ctx} {
				n += testenv.CallMethods(t, o, uverbs.ErrClosed, "Close")
			}
			if mw != nil {
				n += testenv.CallMethods(t, mw, uverbs.ErrClosed, "Close")
			}
		}
		t.Logf("%d methods called on closed objects of %s", n, d.Name)
	})
}

// completionsErr ranges over c.Completions(max) and returns the error it
// yields, or nil; an error after a completion, or a second error, is an
// error of its own.
func completionsErr(c *cq.CQ, max int) func() error {
	return func() error {
		var got error
		n := 0
		for wc, err := range c.Completions(max) {
			n++
			if err == nil || n > 1 || wc != (cq.WC{}) {
				return fmt.Errorf("Completions(%d) yielded %+v, %v as value %d; want one zero WC with an error", max, wc, err, n)
			}
			got = err
		}
		return got
	}
}

func ahFromWC(c *uverbs.Context, port uint8, grh []byte) func() error {
	return func() error {
		_, err := c.AHAttrFromWC(port, uverbs.WCAddr{GRH: true}, grh)
		return err
	}
}

const ipprotoUDP = 17

// testGRH6 is an IPv6 GRH to the GID first:0::1, which no port holds.
func testGRH6(first, nextHdr byte) []byte {
	b := make([]byte, uverbs.GRHSize)
	b[0] = 0x60
	b[6] = nextHdr
	b[24] = first
	b[39] = 1
	return b
}

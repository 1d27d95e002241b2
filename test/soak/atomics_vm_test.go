package soak_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// atomicOps is how many fetch-and-adds a cycle posts.
const atomicOps = 16

// atomics runs fetch-and-add and compare-and-swap on a device that has
// them (the device's AtomicCap; rxe does, siw does not). rpma has no
// call for them (librpma neither), and its regions never get remote
// atomic access, so they go over an rdmacm connection of their own,
// between a server ID whose region allows atomics and a client ID.
//
// The counter starts at 0; fetch-and-add i must return i (a QP's
// atomics execute in order), the matching compare-and-swap must return
// atomicOps and store the swap, the one that does not match must return
// the swap and leave it, and a read must see it.
func (c *cycle) atomics() {
	s := c.s
	if err := c.atomicsErr(); err != nil {
		s.problem("cycle %d: atomics: %v", s.cycles, err)
	}
}

func (c *cycle) atomicsErr() error {
	s := c.s
	ctx := c.ctx
	lch, err := rdmacm.NewEventChannel()
	if err != nil {
		return err
	}
	c.push("rdmacm listener channel", lch.Close)
	l, err := lch.CreateID(rdmacm.TCP)
	if err != nil {
		return err
	}
	if err := l.Bind(netip.AddrPortFrom(netip.MustParseAddr(s.dev.Addr), 0)); err != nil {
		return err
	}
	if err := l.Listen(4); err != nil {
		return err
	}
	la, err := l.LocalAddr()
	if err != nil {
		return err
	}
	cch, err := rdmacm.NewEventChannel()
	if err != nil {
		return err
	}
	c.push("rdmacm client channel", cch.Close)
	cid, err := cch.CreateID(rdmacm.TCP)
	if err != nil {
		return err
	}
	if err := cid.ResolveAddr(netip.AddrPort{}, la, 5*time.Second); err != nil {
		return err
	}
	if _, err := cid.WaitEvent(ctx, rdmacm.EventAddrResolved); err != nil {
		return err
	}
	if err := cid.ResolveRoute(5 * time.Second); err != nil {
		return err
	}
	if _, err := cid.WaitEvent(ctx, rdmacm.EventRouteResolved); err != nil {
		return err
	}
	qpCap := uverbs.QPCap{MaxSendWR: atomicOps + 4, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}
	if err := cid.CreateQP(nil, uverbs.QPInit{Cap: qpCap}); err != nil {
		return err
	}
	cbuf, err := c.alloc(4096)
	if err != nil {
		return err
	}
	cmr, err := mr.Register(cid.PD(), cbuf, uverbs.LocalWrite)
	if err != nil {
		return err
	}
	c.push("rdmacm client MR", cmr.Close)
	param := &rdmacm.ConnParam{ResponderResources: 16, InitiatorDepth: 16, RetryCount: 7, RNRRetryCount: 7}
	if err := cid.Connect(param); err != nil {
		return err
	}
	ev, err := lch.GetEvent(ctx)
	if err != nil {
		return err
	}
	if ev.Type != rdmacm.EventConnectRequest {
		return fmt.Errorf("listener: %v, want a connect request", ev)
	}
	sid := ev.ID
	if err := sid.CreateQP(nil, uverbs.QPInit{Cap: uverbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}}); err != nil {
		sid.Close()
		return err
	}
	sbuf, err := c.alloc(4096)
	if err != nil {
		return err
	}
	smr, err := mr.Register(sid.PD(), sbuf, uverbs.LocalWrite|uverbs.RemoteRead|uverbs.RemoteWrite|uverbs.RemoteAtomic)
	if err != nil {
		return err
	}
	c.push("rdmacm server MR", smr.Close)
	var pd [12]byte
	binary.LittleEndian.PutUint64(pd[:], smr.Addr())
	binary.LittleEndian.PutUint32(pd[8:], smr.RKey())
	if err := sid.Accept(&rdmacm.ConnParam{ResponderResources: 16, InitiatorDepth: 16, RetryCount: 7, RNRRetryCount: 7, PrivateData: pd[:]}); err != nil {
		return err
	}
	est, err := cid.WaitEvent(ctx, rdmacm.EventEstablished)
	if err != nil {
		return err
	}
	if _, err := sid.WaitEvent(ctx, rdmacm.EventEstablished); err != nil {
		return err
	}
	s.cmConns++
	raddr := binary.LittleEndian.Uint64(est.Param.PrivateData)
	rkey := binary.LittleEndian.Uint32(est.Param.PrivateData[8:])

	l2 := newLedger("atomics", 0)
	type expect struct {
		kind opKind
		off  int
		want uint64
	}
	expects := map[uint64]expect{}
	post := func(kind opKind, wr uverbs.SendWR, off int, want uint64) error {
		wr.ID = l2.id()
		wr.Flags = uverbs.SendSignaled
		wr.SGE = []uverbs.SGE{{Addr: cmr.Addr() + uint64(off), Length: 8, LKey: cmr.LKey()}}
		wr.RemoteAddr, wr.RKey = raddr, rkey
		if _, err := cid.QP().PostSend([]uverbs.SendWR{wr}); err != nil {
			return fmt.Errorf("post %v: %w", kind, err)
		}
		l2.posted(wr.ID, opInfo{kind: kind})
		expects[wr.ID] = expect{kind, off, want}
		return nil
	}
	const swap = 0x5eed_0000_0000_0000
	for i := range atomicOps {
		if err := post(opFetchAdd, uverbs.SendWR{Opcode: uverbs.WRAtomicFetchAndAdd, CompareAdd: 1}, 8*i, uint64(i)); err != nil {
			return err
		}
	}
	if err := post(opCmpSwap, uverbs.SendWR{Opcode: uverbs.WRAtomicCmpAndSwp, CompareAdd: atomicOps, Swap: swap}, 8*atomicOps, atomicOps); err != nil {
		return err
	}
	if err := post(opCmpSwap, uverbs.SendWR{Opcode: uverbs.WRAtomicCmpAndSwp, CompareAdd: atomicOps, Swap: 1}, 8*atomicOps+8, swap); err != nil {
		return err
	}
	if err := post(opRead, uverbs.SendWR{Opcode: uverbs.WRRDMARead}, 8*atomicOps+16, swap); err != nil {
		return err
	}
	wc := make([]cq.WC, 8)
	var lastAt = time.Now()
	for len(l2.inFlight) > 0 {
		n, err := cid.SendCQ().Poll(wc)
		if err != nil {
			return err
		}
		for _, w := range wc[:n] {
			op, ok := l2.complete(w)
			if !ok {
				continue
			}
			x := expects[w.ID]
			if w.Status != cq.Success {
				s.failed[w.Status]++
				return fmt.Errorf("%v failed without a fault: %v", op.kind, w.Status)
			}
			s.ops[op.kind]++
			if got := binary.LittleEndian.Uint64(cbuf[x.off:]); got != x.want {
				s.lost = append(s.lost, fmt.Sprintf("atomics: %v %d returned %#x, want %#x", x.kind, w.ID, got, x.want))
				return fmt.Errorf("%v returned %#x, want %#x", x.kind, got, x.want)
			}
			s.bytesVerified += 8
		}
		if n > 0 {
			lastAt = time.Now()
			continue
		}
		if time.Since(lastAt) > stuckWait || ctx.Err() != nil {
			l2.settle(false)
			s.lost = append(s.lost, l2.lost...)
			return errors.New("atomics: completions missing")
		}
		time.Sleep(time.Millisecond)
	}
	// Both ends disconnect, as in hangUp: the client's event comes with
	// the server's answer.
	for _, id := range []*rdmacm.ID{cid, sid} {
		if err := id.Disconnect(); err != nil {
			return err
		}
	}
	for _, id := range []*rdmacm.ID{cid, sid} {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := id.WaitEvent(wctx, rdmacm.EventDisconnected)
		cancel()
		if err != nil {
			s.logf("rdmacm: no disconnect event: %v", err)
		}
	}
	return nil
}

// alloc allocates memory the cycle frees at its end.
func (c *cycle) alloc(n int) ([]byte, error) {
	b, err := mr.Alloc(n)
	if err != nil {
		return nil, err
	}
	c.push("memory", func() error { return mr.Free(b) })
	return b, nil
}

//go:build linux

package mr_test

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/cmtest"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// TestPoolRDMA connects two QPs through the CM, each side with a pool on
// its ID's PD: a client buffer's SGE goes into an RDMA write into a
// server buffer (its address and rkey) and into a send the server
// receives into another buffer. Get and Put allocate nothing, Close fails
// while buffers are out, and after every Put it leaves nothing behind
// (testenv's leak check counts the regions and mappings).
func TestPoolRDMA(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		qpCap := uverbs.QPCap{MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 1, MaxRecvSGE: 1}
		l, addr := cmtest.Listen(t, netip.MustParseAddr(d.Addr), rdmacm.TCP)
		c := cmtest.Dial(t, ctx, addr, rdmacm.TCP, qpCap, 2*time.Second)
		if err := c.Connect(&rdmacm.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7}); err != nil {
			t.Fatal(err)
		}
		req, err := l.WaitEvent(ctx, rdmacm.EventConnectRequest)
		if err != nil {
			t.Fatal(err)
		}
		s := req.ID
		if err := s.CreateQP(nil, uverbs.QPInit{Cap: qpCap}); err != nil {
			t.Fatal(err)
		}
		spool, err := mr.NewPool(s.PD(), 256, 8, uverbs.LocalWrite|uverbs.RemoteWrite)
		if err != nil {
			t.Fatal(err)
		}
		cpool, err := mr.NewPool(c.PD(), 256, 8, uverbs.LocalWrite)
		if err != nil {
			t.Fatal(err)
		}
		get := func(p *mr.Pool) *mr.PoolBuffer {
			t.Helper()
			b, err := p.Get()
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		rb := get(spool)
		if _, err := s.QP().PostRecv([]uverbs.RecvWR{{ID: uint64(rb.Index()), SGE: []uverbs.SGE{rb.SGE(rb.Len())}}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Accept(&rdmacm.ConnParam{ResponderResources: 1, InitiatorDepth: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitEvent(ctx, rdmacm.EventEstablished); err != nil {
			t.Fatal(err)
		}
		if _, err := s.WaitEvent(ctx, rdmacm.EventEstablished); err != nil {
			t.Fatal(err)
		}

		// An RDMA write from a client buffer into a server buffer.
		wb, cb := get(spool), get(cpool)
		const written = "written by RDMA into a pool buffer"
		copy(cb.Bytes(), written)
		wr := []uverbs.SendWR{{ID: 1, Opcode: uverbs.WRRDMAWrite, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{cb.SGE(len(written))}, RemoteAddr: wb.Addr(), RKey: wb.RKey()}}
		if _, err := c.QP().PostSend(wr); err != nil {
			t.Fatal(err)
		}
		if wc, err := c.GetSendComp(ctx); err != nil || wc.Status != cq.Success || wc.ID != 1 {
			t.Fatalf("write completion %+v, %v", wc, err)
		}
		if !bytes.Equal(wb.Bytes()[:len(written)], []byte(written)) {
			t.Errorf("server buffer %q after the write", wb.Bytes()[:len(written)])
		}

		// A send from another client buffer, received into rb.
		sb := get(cpool)
		const sent = "sent from a pool buffer"
		copy(sb.Bytes(), sent)
		wr = []uverbs.SendWR{{ID: 2, Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{sb.SGE(len(sent))}}}
		if _, err := c.QP().PostSend(wr); err != nil {
			t.Fatal(err)
		}
		if wc, err := c.GetSendComp(ctx); err != nil || wc.Status != cq.Success || wc.ID != 2 {
			t.Fatalf("send completion %+v, %v", wc, err)
		}
		wc, err := s.GetRecvComp(ctx)
		if err != nil || wc.Status != cq.Success || wc.ID != uint64(rb.Index()) || int(wc.ByteLen) != len(sent) {
			t.Fatalf("receive completion %+v, %v", wc, err)
		}
		if !bytes.Equal(rb.Bytes()[:len(sent)], []byte(sent)) {
			t.Errorf("received %q", rb.Bytes()[:len(sent)])
		}

		if n := testing.AllocsPerRun(100, func() {
			b, err := cpool.Get()
			if err != nil {
				t.Fatal(err)
			}
			cpool.Put(b)
		}); n != 0 {
			t.Errorf("Get/Put: %v allocations per run, want 0", n)
		}

		// Every work request is done; disconnect, as rping does.
		if err := c.Disconnect(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.WaitEvent(ctx, rdmacm.EventDisconnected); err != nil {
			t.Fatal(err)
		}
		s.Disconnect()
		if _, err := c.WaitEvent(ctx, rdmacm.EventDisconnected); err != nil {
			t.Fatal(err)
		}
		if err := spool.Close(); !errors.Is(err, mr.ErrBuffersOut) || !errors.Is(err, uverbs.ErrBusy) {
			t.Errorf("Close with buffers out: %v, want ErrBuffersOut", err)
		}
		for _, b := range []*mr.PoolBuffer{rb, wb} {
			if err := spool.Put(b); err != nil {
				t.Error(err)
			}
		}
		for _, b := range []*mr.PoolBuffer{cb, sb} {
			if err := cpool.Put(b); err != nil {
				t.Error(err)
			}
		}
		for _, p := range []*mr.Pool{spool, cpool, spool} { // spool twice: Close is idempotent
			if err := p.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}
		if _, err := spool.Get(); !errors.Is(err, uverbs.ErrClosed) {
			t.Errorf("Get after Close: %v, want ErrClosed", err)
		}
		if err := spool.Put(rb); !errors.Is(err, uverbs.ErrClosed) {
			t.Errorf("Put after Close: %v, want ErrClosed", err)
		}
		for _, id := range []*rdmacm.ID{s, c} {
			if err := id.Close(); err != nil {
				t.Errorf("ID close: %v", err)
			}
		}
	})
}

package mlx5

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// newSRQ creates an SRQ as uverbs does.
func newSRQ(t *testing.T, c *context, maxWR, maxSGE, srqn uint32) (*srq, provider.SRQInit, []byte) {
	t.Helper()
	init := provider.SRQInit{MaxWR: maxWR, MaxSGE: maxSGE}
	req := make([]byte, createSRQSize)
	p, err := c.CreateSRQ(&init, req)
	if err != nil {
		t.Fatal(err)
	}
	asked := init
	resp := make([]byte, createSRQRespSize)
	binary.NativeEndian.PutUint32(resp, srqn)
	rq, err := p.Finish(resp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rq.Close() })
	if want := uint32(roundupPow2(uint64(maxWR)+1) - 1); init.MaxWR != want {
		t.Errorf("SRQ of %d reports %d WRs, want %d", maxWR, init.MaxWR, want)
	}
	return rq.(*srq), asked, req
}

// TestSRQ: an SRQ of 4 WRs has 16 WQEs: 8 on the free list (7 postable)
// and 8 in the wait queue; a WQE holds every SGE, empty ones too, and the
// invalid lkey after them; Flush writes the number of WQEs ever posted.
func TestSRQ(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	s, asked, req := newSRQ(t, c, 4, 2, 0x42)
	var r abi.MLX5CreateSRQ
	decode(req, &r)
	if r != (abi.MLX5CreateSRQ{BufAddr: mem.Addr(s.buf), DBAddr: s.db.addr()}) {
		t.Errorf("request %+v", r)
	}
	if asked.MaxWR != 15 || asked.MaxSGE != 3 || s.max != 16 || s.wqeShift != 6 {
		t.Errorf("asked for %d WRs of %d SGEs; %d WQEs of 1<<%d", asked.MaxWR, asked.MaxSGE, s.max, s.wqeShift)
	}
	if s.head != 0 || s.tail != 7 || s.waitqHead != 8 || s.waitqTail != 15 {
		t.Errorf("lists: head %d tail %d wait queue %d..%d", s.head, s.tail, s.waitqHead, s.waitqTail)
	}
	for i, want := range []uint16{1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 0} {
		if got := s.next(i).nextWQEIndex.get(); got != want {
			t.Errorf("WQE %d links to %d, want %d", i, got, want)
		}
	}
	garbage(s.buf[64:128])
	s.buf[64+2], s.buf[64+3] = 0, 2
	wr := provider.RecvWR{ID: 1, SGE: []provider.SGE{{Addr: 0x1000, Length: 0x10, LKey: 5}}}
	s.Put(&wr)
	wr = provider.RecvWR{ID: 2, SGE: []provider.SGE{{Addr: 0x2000, LKey: 6}, {Addr: 0x3000, Length: 0x30, LKey: 7}}}
	s.Put(&wr)
	s.Flush()
	want := hexBytes("ee ee 00 02 ee ee ee ee ee ee ee ee ee ee ee ee" +
		" 00 00 00 00 00 00 00 06 00 00 00 00 00 00 20 00" +
		" 00 00 00 30 00 00 00 07 00 00 00 00 00 00 30 00" +
		" 00 00 00 00 00 00 01 00 00 00 00 00 00 00 00 00")
	if got := s.buf[64:128]; !bytes.Equal(got, want) {
		t.Errorf("WQE 1\n% x\nwant\n% x", got, want)
	}
	if got := binary.BigEndian.Uint32(s.db.b); got != 2 || s.head != 2 {
		t.Errorf("doorbell record %d, head %d", got, s.head)
	}
	for i := 2; i < 7; i++ {
		if err := s.Put(&wr); err != nil {
			t.Fatalf("WR %d: %v", i, err)
		}
	}
	if err := s.Put(&wr); !errors.Is(err, provider.ErrFull) {
		t.Errorf("eighth WR: %v", err)
	}
	if err := s.Put(&provider.RecvWR{SGE: make([]provider.SGE, 4)}); !errors.Is(err, provider.ErrInvalid) {
		t.Errorf("four SGEs: %v", err)
	}
	s.Flush()
	if got := binary.BigEndian.Uint32(s.db.b); got != 7 {
		t.Errorf("doorbell record %d, want 7", got)
	}
}

// TestSRQCompletion: a receive on a QP with an SRQ finds the SRQ through
// the QP, returns the WQE's wr_id and puts the WQE at the tail of the
// free list; a page-faulted WQE goes to the wait queue, another comes out
// of it, and the WQE is posted again at once.
func TestSRQCompletion(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	s, _, _ := newSRQ(t, c, 4, 1, 0x42)
	q := newQP(t, c, qpOpts{sendWR: 1, sendSGE: 1, srq: s, qpn: 0x99})
	for i := 0; i < 3; i++ {
		s.Put(&provider.RecvWR{ID: uint64(10 + i), SGE: []provider.SGE{{Addr: uint64(i), Length: 8, LKey: 1}}})
	}
	s.Flush()
	putCQE(q.recvCQ, 0, cqeFields{opOwn: cqeRespSend << 4, sopDropQPN: 0x99, wqeCounter: 1, byteCnt: 4}.bytes())
	wc := make([]provider.WC, 2)
	if n := q.recvCQ.Poll(wc); n != 1 || wc[0].ID != 11 || wc[0].Opcode != abi.IB_WC_RECV {
		t.Fatalf("polled %d: %+v", n, wc[0])
	}
	if s.tail != 1 || s.next(7).nextWQEIndex.get() != 1 {
		t.Errorf("tail %d, WQE 7 links to %d", s.tail, s.next(7).nextWQEIndex.get())
	}

	// WQE 0 page-faults: it waits (after 15), 8 leaves the wait queue for
	// the free list's tail, and WQE 0's SGEs are posted again at the head
	// (3), with its wr_id, and rung: counter 4.
	putCQE(q.recvCQ, 1, cqeFields{opOwn: cqeRespErr << 4, sopDropQPN: 0x99, wqeCounter: 0, syndrome: syndRemoteAbortedErr, vendorErr: vendorSyndODPPFault}.bytes())
	putCQE(q.recvCQ, 2, cqeFields{opOwn: cqeRespSend << 4, sopDropQPN: 0x99, wqeCounter: 2}.bytes())
	if n := q.recvCQ.Poll(wc); n != 1 || wc[0].ID != 12 {
		t.Fatalf("polled %d: %+v", n, wc[0])
	}
	if s.waitqTail != 0 || s.next(15).nextWQEIndex.get() != 0 || s.waitqHead != 9 {
		t.Errorf("wait queue %d..%d", s.waitqHead, s.waitqTail)
	}
	if s.wrid[3] != 10 || !bytes.Equal(s.buf[3*32+16:3*32+32], s.buf[16:32]) || s.head != 4 {
		t.Errorf("repost: wr_id %d, head %d, WQE 3 % x", s.wrid[3], s.head, s.buf[3*32:4*32])
	}
	if got := binary.BigEndian.Uint32(s.db.b); got != 4 {
		t.Errorf("doorbell record %d, want 4", got)
	}
	// WQE 2 was freed after 8 (the tail the fault made).
	if s.tail != 2 || s.next(8).nextWQEIndex.get() != 2 {
		t.Errorf("tail %d", s.tail)
	}
}

// TestSRQNoWaitQueue: a device whose SRQs cannot hold twice the WRs gets
// no wait queue.
func TestSRQNoWaitQueue(t *testing.T) {
	r := ucontextResp(true)
	r.MaxSRQRecvWr = 10
	c := openCtx(t, newFakeDev(t), r)
	init := provider.SRQInit{MaxWR: 8, MaxSGE: 1}
	p, err := c.CreateSRQ(&init, make([]byte, createSRQSize))
	if err != nil {
		t.Fatal(err)
	}
	s := p.(*pendingSRQ).s
	defer p.Abort()
	if s.max != 16 || s.tail != 15 || s.waitqHead != -1 || init.MaxWR != 15 {
		t.Errorf("%d WQEs, tail %d, wait queue %d, asked %d", s.max, s.tail, s.waitqHead, init.MaxWR)
	}
	for _, bad := range []provider.SRQInit{{MaxWR: 11, MaxSGE: 1}, {MaxWR: 1, MaxSGE: 33}, {MaxWR: 1, MaxSGE: 1, CQ: &cq{}}} {
		if _, err := c.CreateSRQ(&bad, make([]byte, createSRQSize)); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestSRQNoAllocs(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	s, _, _ := newSRQ(t, c, 4, 1, 1)
	wr := provider.RecvWR{SGE: []provider.SGE{{Addr: 1, Length: 1, LKey: 1}}}
	if n := testing.AllocsPerRun(100, func() {
		i := s.head
		if err := s.Put(&wr); err != nil {
			t.Fatal(err)
		}
		s.Flush()
		s.freeWQE(i)
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

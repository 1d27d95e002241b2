package mlx5

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/purerdma/purerdma/internal/provider"
)

// TestRQPostIsPutFlush: Post, uverbs' path, writes the WQEs, wr_ids,
// counters and doorbell record that Put of each request and one Flush
// write, and refuses the same request with the same error, a caller's
// SGE limit below the queue's included.
func TestRQPostIsPutFlush(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	general := newQP(t, c, qpOpts{sendWR: 1, sendSGE: 1, recvWR: 4, recvSGE: 3, qpn: 1})
	batch := newQP(t, c, qpOpts{sendWR: 1, sendSGE: 1, recvWR: 4, recvSGE: 3, qpn: 2})
	garbage(general.buf[:general.sq.off])
	garbage(batch.buf[:batch.sq.off])
	limit := general.rq.maxGS - 1
	sg := func(n int) []provider.SGE {
		s := make([]provider.SGE, n)
		for i := range s {
			// The first of each has length 0: no data segment.
			s[i] = provider.SGE{Addr: uint64(0x1000 * (i + 1)), Length: uint32(0x10 * i), LKey: uint32(i + 5)}
		}
		return s
	}
	for k, wrs := range [][]provider.RecvWR{
		{{ID: 1, SGE: sg(2)}},
		{{ID: 2, SGE: sg(0)}, {ID: 3, SGE: sg(limit)}, {ID: 4, SGE: sg(limit + 1)}},
		{},
		{{ID: 5, SGE: sg(1)}, {ID: 6, SGE: sg(1)}}, // one past the 4 WQEs
		nil, // the device is done with them
		{{ID: 7, SGE: sg(1)}, {ID: 8, SGE: []provider.SGE{sge1, sge1}}, {ID: 9, SGE: sg(0)}},
	} {
		if wrs == nil {
			general.rq.tail.Store(general.rq.head.Load())
			batch.rq.tail.Store(batch.rq.head.Load())
			continue
		}
		var want int
		var wantErr error
		for ; want < len(wrs); want++ {
			if len(wrs[want].SGE) > limit {
				wantErr = errRQSGEs
				break
			}
			if wantErr = general.rq.Put(&wrs[want]); wantErr != nil {
				break
			}
		}
		general.rq.Flush()
		n, err := batch.rq.Post(wrs, limit)
		if n != want || !errors.Is(err, wantErr) {
			t.Errorf("batch %d: Post = %d, %v; Put and Flush %d, %v", k, n, err, want, wantErr)
		}
		g, b := &general.rq, &batch.rq
		if !bytes.Equal(batch.buf[:batch.sq.off], general.buf[:general.sq.off]) || !slices.Equal(b.wrid, g.wrid) {
			t.Fatalf("batch %d: Post wrote\n% x\n%x\nPut and Flush\n% x\n%x", k,
				batch.buf[:batch.sq.off], b.wrid, general.buf[:general.sq.off], g.wrid)
		}
		if b.head.Load() != g.head.Load() || b.pending != g.pending || *b.dbRecv != *g.dbRecv {
			t.Fatalf("batch %d: Post's head %d, pending %d, record %#x; Put and Flush's %d, %d, %#x", k,
				b.head.Load(), b.pending, *b.dbRecv, g.head.Load(), g.pending, *g.dbRecv)
		}
	}
	if h := batch.rq.head.Load(); h != 7 {
		t.Errorf("head %d after the batches, want 7", h)
	}
}

// TestSRQPostIsPutFlush is TestRQPostIsPutFlush for the SRQ: Post under
// one hold of the lock writes what Put of each request and one Flush do.
func TestSRQPostIsPutFlush(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	general, _, _ := newSRQ(t, c, 4, 2, 0x42)
	batch, _, _ := newSRQ(t, c, 4, 2, 0x43)
	garbage(general.buf)
	garbage(batch.buf)
	// Garbage broke the links: link the free lists again, alike.
	general.link(0, general.max)
	batch.link(0, batch.max)
	limit := general.maxGS - 1
	sg := func(n int) []provider.SGE {
		s := make([]provider.SGE, n)
		for i := range s {
			s[i] = provider.SGE{Addr: uint64(0x1000 * (i + 1)), Length: uint32(0x10 * i), LKey: uint32(i + 5)}
		}
		return s
	}
	for k, wrs := range [][]provider.RecvWR{
		{{ID: 1, SGE: sg(2)}},
		{{ID: 2, SGE: sg(0)}, {ID: 3, SGE: sg(limit)}, {ID: 4, SGE: sg(limit + 1)}},
		{},
		{{ID: 5, SGE: sg(1)}, {ID: 6, SGE: sg(1)}, {ID: 7, SGE: sg(1)}, {ID: 8, SGE: sg(1)}, {ID: 9, SGE: sg(1)}},
		nil, // the device is done with one
		{{ID: 10, SGE: []provider.SGE{sge1}}, {ID: 11, SGE: sg(1)}},
	} {
		if wrs == nil {
			general.freeWQE(2)
			batch.freeWQE(2)
			continue
		}
		var want int
		var wantErr error
		for ; want < len(wrs); want++ {
			if len(wrs[want].SGE) > limit {
				wantErr = errSRQSGEs
				break
			}
			if wantErr = general.Put(&wrs[want]); wantErr != nil {
				break
			}
		}
		general.Flush()
		n, err := batch.Post(wrs, limit)
		if n != want || err != wantErr {
			t.Errorf("batch %d: Post = %d, %v; Put and Flush %d, %v", k, n, err, want, wantErr)
		}
		if !bytes.Equal(batch.buf, general.buf) || !slices.Equal(batch.wrid, general.wrid) || !bytes.Equal(batch.db.b, general.db.b) {
			t.Fatalf("batch %d: Post wrote\n% x\n%x\n% x\nPut and Flush\n% x\n%x\n% x", k,
				batch.buf, batch.wrid, batch.db.b, general.buf, general.wrid, general.db.b)
		}
		if batch.head != general.head || batch.tail != general.tail || batch.counter != general.counter || batch.pending != general.pending {
			t.Fatalf("batch %d: Post's head %d, tail %d, counter %d, pending %d; Put and Flush's %d, %d, %d, %d", k,
				batch.head, batch.tail, batch.counter, batch.pending, general.head, general.tail, general.counter, general.pending)
		}
	}
	if batch.counter != 8 {
		t.Errorf("%d WQEs posted, want 8", batch.counter)
	}
	batch.Close()
	if n, err := batch.Post([]provider.RecvWR{{ID: 12}}, limit); n != 0 || err != errSRQClosed {
		t.Errorf("Post on a closed SRQ = %d, %v", n, err)
	}
}

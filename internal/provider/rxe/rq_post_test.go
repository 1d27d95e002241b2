package rxe

import (
	"bytes"
	"math"
	"testing"

	"github.com/purerdma/purerdma/internal/provider"
)

// recvBatches are batches of receive requests for the tests that hold
// Post, uverbs' path, to Put and Flush, the general one: SGE counts from
// none to the queue's four, one past a caller's limit of 3, one of more
// than 4 GiB (its slot given back), a full queue and an empty batch.
func recvBatches() [][]provider.RecvWR {
	sg := func(n int) []provider.SGE {
		s := make([]provider.SGE, n)
		for i := range s {
			s[i] = provider.SGE{Addr: uint64(0x1000 * (i + 1)), Length: uint32(0x10 * i), LKey: uint32(i + 5)}
		}
		return s
	}
	return [][]provider.RecvWR{
		{{ID: 1, SGE: sg(1)}},
		{{ID: 2, SGE: sg(0)}, {ID: 3, SGE: sg(2)}, {ID: 4, SGE: sg(3)}},
		{{ID: 5, SGE: sg(1)}, {ID: 6, SGE: sg(4)}, {ID: 7, SGE: sg(1)}},
		{{ID: 13, SGE: sg(1)}}, // the queue is full
		{{ID: 8, SGE: []provider.SGE{{Length: math.MaxUint32}, {Length: 1}}}},
		{},
		{{ID: 9, SGE: sg(2)}, {ID: 10, SGE: sg(1)}, {ID: 11, SGE: sg(3)}, {ID: 12, SGE: sg(1)}},
	}
}

// TestRQPostIsPutFlush: Post writes the bytes and the producer that Put
// of each request and one Flush write, refuses the same request with the
// same error, and takes a caller's SGE limit below the queue's.
func TestRQPostIsPutFlush(t *testing.T) {
	const limit = 3 // the caller's: the queue takes 4
	_, _, general, _, gBuf := newQP(t, rcInit, 8, 4)
	_, _, batch, _, bBuf := newQP(t, rcInit, 8, 4)
	for i := range gBuf {
		gBuf[i], bBuf[i] = 0xee, 0xee
	}
	gBuf, bBuf = gBuf[queueHdr:], bBuf[queueHdr:] // the slots; the indices are checked below
	for k, wrs := range recvBatches() {
		if k == 4 { // the kernel takes what is posted
			setConsumer(general.q.buf, producer(general.q.buf))
			setConsumer(batch.q.buf, producer(batch.q.buf))
		}
		var want int
		var wantErr error
		for ; want < len(wrs); want++ {
			if len(wrs[want].SGE) > limit {
				wantErr = (*sgeRefusal)(general)
				break
			}
			if wantErr = general.Put(&wrs[want]); wantErr != nil {
				break
			}
		}
		general.Flush()
		n, err := batch.Post(wrs, limit)
		if n != want || errString(err) != errString(wantErr) {
			t.Errorf("batch %d: Post = %d, %v; Put and Flush %d, %v", k, n, err, want, wantErr)
		}
		if !bytes.Equal(bBuf, gBuf) {
			t.Fatalf("batch %d: Post wrote\n% x\nPut and Flush\n% x", k, bBuf, gBuf)
		}
		if producer(batch.q.buf) != producer(general.q.buf) || batch.pending != general.pending ||
			batch.published != general.published || batch.q.free != general.q.free {
			t.Fatalf("batch %d: Post's producer %d, pending %d, published %d, free %d; Put and Flush's %d, %d, %d, %d", k,
				producer(batch.q.buf), batch.pending, batch.published, batch.q.free,
				producer(general.q.buf), general.pending, general.published, general.q.free)
		}
	}
	if p := producer(batch.q.buf); p != 9&7 {
		t.Errorf("producer %d after the batches, want 9 of 8 slots", p)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

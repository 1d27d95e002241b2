package siw

import (
	"bytes"
	"testing"

	"github.com/purerdma/purerdma/internal/provider"
)

// TestRQPostIsPut: Post, uverbs' path, writes the elements and the slot
// that Put of each request writes, and refuses the same request with the
// same error, a caller's SGE limit (2) below the queue's (3) included.
func TestRQPostIsPut(t *testing.T) {
	const limit = 2
	_, _, general := newQP(t, 4, 4)
	_, _, batch := newQP(t, 4, 4)
	for i := range general.buf {
		general.buf[i], batch.buf[i] = 0xee, 0xee
	}
	sg := func(n int) []provider.SGE {
		s := make([]provider.SGE, n)
		for i := range s {
			s[i] = provider.SGE{Addr: uint64(0x1000 * (i + 1)), Length: uint32(0x10 * i), LKey: uint32(i + 5)}
		}
		return s
	}
	take := func(q *recvQueue) { // the kernel takes every element
		for i := 0; i < len(q.buf); i += rqeSize {
			wordAt(q.buf[i:], 0).Store(0)
		}
	}
	for k, wrs := range [][]provider.RecvWR{
		{{ID: 1, SGE: sg(1)}},
		{{ID: 2, SGE: sg(0)}, {ID: 3, SGE: sg(2)}, {ID: 4, SGE: sg(3)}},
		{},
		{{ID: 5, SGE: sg(1)}, {ID: 6, SGE: sg(1)}}, // one past the 4 elements
		nil, // the kernel takes them
		{{ID: 7, SGE: sg(2)}, {ID: 8, SGE: sg(1)}, {ID: 9, SGE: sg(0)}},
	} {
		if wrs == nil {
			take(general)
			take(batch)
			continue
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
		n, err := batch.Post(wrs, limit)
		if n != want || errString(err) != errString(wantErr) {
			t.Errorf("batch %d: Post = %d, %v; Put %d, %v", k, n, err, want, wantErr)
		}
		if !bytes.Equal(batch.buf, general.buf) || batch.off != general.off {
			t.Fatalf("batch %d: Post wrote\n% x\nat %d, Put\n% x\nat %d", k, batch.buf, batch.off/rqeSize, general.buf, general.off/rqeSize)
		}
	}
	if batch.off != 3*rqeSize {
		t.Errorf("next element %d after the batches, want 3", batch.off/rqeSize)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

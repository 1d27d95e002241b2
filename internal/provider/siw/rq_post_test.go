package siw

import (
	"bytes"
	"testing"

	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
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

// TestRQPostOneSGE: a request of one SGE, the common one, has its own
// way in Post, beside the loop every other count takes. Its element, over
// stale bytes, must be what the loop writes for that entry: the ID, flags
// VALID and num_sge 1 in one word (the opcode byte 0), the entry, and
// nothing else (the unused word and the entries after it keep 0xee).
// The two-SGE request, the loop's, writes the same first entry.
func TestRQPostOneSGE(t *testing.T) {
	one := provider.SGE{Addr: 0x1122334455667788, Length: 0x99aabbcc, LKey: 0xddeeff00}
	two := provider.SGE{Addr: 0x0a0b0c0d0e0f1011, Length: 0x12131415, LKey: 0x16171819}
	for _, tc := range []struct {
		name string
		sge  []provider.SGE
		head []byte // the element's first bytes; 0xee after them
	}{
		{"one", []provider.SGE{one}, []byte{
			0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // id
			0x01, 0x00, 0x01, 0x00, // flags VALID, num_sge 1, opcode 0
			0xee, 0xee, 0xee, 0xee, // unused: kept
			0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, // sge[0].laddr
			0xcc, 0xbb, 0xaa, 0x99, 0x00, 0xff, 0xee, 0xdd, // length, lkey
		}},
		{"two", []provider.SGE{one, two}, []byte{
			0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
			0x01, 0x00, 0x02, 0x00,
			0xee, 0xee, 0xee, 0xee,
			0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
			0xcc, 0xbb, 0xaa, 0x99, 0x00, 0xff, 0xee, 0xdd,
			0x11, 0x10, 0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, // sge[1]
			0x15, 0x14, 0x13, 0x12, 0x19, 0x18, 0x17, 0x16,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, rq := newQP(t, 4, 2)
			for i := range rq.buf {
				rq.buf[i] = 0xee
			}
			for slot := range 2 { // slot 1, then slot 0 after the wrap
				wordAt(rq.buf[slot*rqeSize:], 0).Store(0)
				rq.off = uintptr(1-slot) * rqeSize
				wr := provider.RecvWR{ID: 0x0102030405060708, SGE: tc.sge}
				if n, err := rq.Post(mem.One(&wr), 3); n != 1 || err != nil {
					t.Fatalf("Post = %d, %v", n, err)
				}
				want := bytes.Repeat([]byte{0xee}, rqeSize)
				copy(want, tc.head)
				at := (1 - slot) * rqeSize
				if got := rq.buf[at : at+rqeSize]; !bytes.Equal(got, want) {
					t.Errorf("element %d:\n% x\nwant\n% x", 1-slot, got, want)
				}
				if rq.off != uintptr(2-slot)%2*rqeSize {
					t.Errorf("next element at %d, want %d", rq.off/rqeSize, (2-slot)%2)
				}
			}
		})
	}
}

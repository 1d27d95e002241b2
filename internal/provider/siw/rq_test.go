package siw

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

func TestRQPut(t *testing.T) {
	dev, _, rq := newQP(t, 4, 2)
	wr := provider.RecvWR{ID: 42, SGE: []provider.SGE{{Addr: 0x1000, Length: 64, LKey: 1}, {Addr: 0x2000, Length: 32, LKey: 2}}}
	if err := rq.Put(&wr); err != nil {
		t.Fatal(err)
	}
	want := abi.SiwRQE{ID: 42, Flags: abi.SIW_WQE_VALID, NumSGE: 2}
	want.SGE[0] = abi.SiwSGE{LAddr: 0x1000, Length: 64, LKey: 1}
	want.SGE[1] = abi.SiwSGE{LAddr: 0x2000, Length: 32, LKey: 2}
	if diff := cmp.Diff(want, rq.rqe(0)); diff != "" {
		t.Errorf("RQE (-want +got):\n%s", diff)
	}

	// No scatter entries: the kernel takes it.
	if err := rq.Put(&provider.RecvWR{ID: 43}); err != nil {
		t.Fatal(err)
	}
	if got := rq.rqe(1); got.NumSGE != 0 || got.Flags != abi.SIW_WQE_VALID || got.ID != 43 {
		t.Errorf("RQE %+v", got)
	}
	if err := rq.Put(&provider.RecvWR{ID: 44}); err != provider.ErrFull {
		t.Fatalf("Put on a full RQ = %v", err)
	}
	rq.consume(0)
	// The refusal is the queue itself as an error, made without a call.
	const refusal = "siw: receive request with more SGEs than the queue takes (3): invalid argument"
	if err := rq.Put(&provider.RecvWR{ID: 44, SGE: make([]provider.SGE, 4)}); !errors.Is(err, provider.ErrInvalid) || err.Error() != refusal {
		t.Errorf("4 SGEs on a QP of 3: %v, want %q", err, refusal)
	}
	if err := rq.Put(&provider.RecvWR{ID: 44}); err != nil {
		t.Fatal(err)
	}
	if got := rq.rqe(0).ID; got != 44 {
		t.Errorf("slot 0 holds %d after wrapping", got)
	}
	if err := rq.Flush(); err != nil || dev.doorbells != 0 {
		t.Errorf("RQ Flush = %v, %d doorbells; siw has no receive doorbell", err, dev.doorbells)
	}
}

// TestRQPutStale checks that Put writes what libsiw's siw_post_recv
// writes and no more: the unused word and the SGE entries past num_sge
// keep the element's previous bytes, which the kernel never reads
// (siw_rqe_get copies num_sge entries), as they do under libsiw.
func TestRQPutStale(t *testing.T) {
	tests := []struct {
		name string
		sges []provider.SGE
	}{
		{"no SGE", nil},
		{"one SGE", []provider.SGE{{Addr: 0x1000, Length: 64, LKey: 1}}},
		{"three SGEs", []provider.SGE{{Addr: 0x1000, Length: 64, LKey: 1}, {Addr: 0x2000, Length: 32, LKey: 2},
			{Addr: 0x3000, Length: 16, LKey: 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, rq := newQP(t, 4, 2)
			for i := range rq.buf {
				rq.buf[i] = 0xee
			}
			rq.buf[flagsWord] = 0 // free
			if err := rq.Put(&provider.RecvWR{ID: 42, SGE: tt.sges}); err != nil {
				t.Fatal(err)
			}
			const stale = 0xeeeeeeee
			want := abi.SiwRQE{ID: 42, Flags: abi.SIW_WQE_VALID, NumSGE: uint8(len(tt.sges)), Unused: stale}
			for i := range want.SGE {
				want.SGE[i] = abi.SiwSGE{LAddr: stale<<32 | stale, Length: stale, LKey: stale}
			}
			for i, s := range tt.sges {
				want.SGE[i] = abi.SiwSGE{LAddr: s.Addr, Length: s.Length, LKey: s.LKey}
			}
			if diff := cmp.Diff(want, rq.rqe(0)); diff != "" {
				t.Errorf("RQE (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRQNoAllocs(t *testing.T) {
	_, _, rq := newQP(t, 4, 8)
	wr := provider.RecvWR{ID: 1, SGE: []provider.SGE{{Addr: 1, Length: 2, LKey: 3}}}
	var q provider.RQ = rq
	allocs := testing.AllocsPerRun(100, func() {
		slot := int(rq.off / rqeSize)
		if q.Put(&wr) != nil || q.Flush() != nil {
			panic("Put failed")
		}
		rq.consume(slot)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per Put+Flush", allocs)
	}
}

// TestRQPostBounds checks the ends of the ring Post writes without a
// bounds check: a queue without elements (or closed) takes nothing, and
// a request of SIW_MAX_SGE entries fills its element's SGE array and not
// a byte of the next element.
func TestRQPostBounds(t *testing.T) {
	full := make([]provider.SGE, abi.SIW_MAX_SGE)
	for i := range full {
		full[i] = provider.SGE{Addr: 0x1000 * uint64(i+1), Length: uint32(i + 1), LKey: uint32(i + 10)}
	}
	tests := []struct {
		name    string
		nrqe    uint32
		closed  bool
		wrs     []provider.RecvWR
		wantN   int
		wantErr error
	}{
		{"no elements, no requests", 0, false, nil, 0, nil},
		{"no elements", 0, false, []provider.RecvWR{{ID: 1}}, 0, provider.ErrFull},
		{"closed, no requests", 2, true, nil, 0, nil},
		{"closed", 2, true, []provider.RecvWR{{ID: 1}}, 0, provider.ErrFull},
		{"SIW_MAX_SGE entries", 2, false, []provider.RecvWR{{ID: 7, SGE: full}}, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, rq := newQP(t, 4, tt.nrqe)
			rq.maxSGE = abi.SIW_MAX_SGE
			for i := range rq.buf {
				rq.buf[i] = 0xee
			}
			for i := range tt.nrqe {
				rq.consume(int(i))
			}
			next := abi.SiwRQE{}
			if tt.nrqe > 1 {
				next = rq.rqe(1)
			}
			if tt.closed {
				if err := rq.Close(); err != nil {
					t.Fatal(err)
				}
			}
			n, err := rq.Post(tt.wrs, abi.SIW_MAX_SGE)
			if n != tt.wantN || err != tt.wantErr {
				t.Fatalf("Post = %d, %v; want %d, %v", n, err, tt.wantN, tt.wantErr)
			}
			if n == 0 {
				return
			}
			const stale = 0xeeeeeeee
			want := abi.SiwRQE{ID: 7, Flags: abi.SIW_WQE_VALID, NumSGE: abi.SIW_MAX_SGE, Unused: stale}
			for i, s := range full {
				want.SGE[i] = abi.SiwSGE{LAddr: s.Addr, Length: s.Length, LKey: s.LKey}
			}
			if diff := cmp.Diff(want, rq.rqe(0)); diff != "" {
				t.Errorf("RQE 0 (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(next, rq.rqe(1)); diff != "" {
				t.Errorf("RQE 1 (-want +got):\n%s", diff)
			}
		})
	}
}

package rxe

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

func TestRQPut(t *testing.T) {
	dev, _, r, _, rqBuf := newQP(t, rcInit, 8, 4)
	slot := slotOf(rqBuf, 0)
	for i := range slot {
		slot[i] = 0xee
	}
	wr := provider.RecvWR{ID: 42, SGE: []provider.SGE{{Addr: 0x1000, Length: 64, LKey: 1}, {Addr: 0x2000, Length: 36, LKey: 2}}}
	if err := r.Put(&wr); err != nil {
		t.Fatal(err)
	}
	if p := producer(rqBuf); p != 0 {
		t.Fatalf("Put published the producer (%d)", p)
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if p := producer(rqBuf); p != 1 || dev.doorbells != 0 {
		t.Errorf("after Flush: producer %d, %d doorbells; want 1, 0", p, dev.doorbells)
	}
	// What librxe's rxe_post_one_recv writes, and only that: the
	// reserved words and the slot past the SGEs keep their stale bytes.
	const stale = 0xeeeeeeee
	want := abi.RxeRecvWQE{WrID: 42, Reserved: stale, Padding: stale,
		Dma: abi.RxeDMAInfo{Length: 100, Resid: 100, NumSGE: 2, Reserved: stale}}
	if diff := cmp.Diff(want, decode[abi.RxeRecvWQE](t, slot)); diff != "" {
		t.Errorf("WQE (-want +got):\n%s", diff)
	}
	wantSGE := []abi.RxeSGE{{Addr: 0x1000, Length: 64, LKey: 1}, {Addr: 0x2000, Length: 36, LKey: 2}}
	gotSGE := []abi.RxeSGE{decode[abi.RxeSGE](t, slot[recvWQEHdr:]), decode[abi.RxeSGE](t, slot[recvWQEHdr+sgeSize:])}
	if diff := cmp.Diff(wantSGE, gotSGE); diff != "" {
		t.Errorf("SGEs (-want +got):\n%s", diff)
	}
	for i, b := range slot[recvWQEHdr+2*sgeSize:] {
		if b != 0xee {
			t.Fatalf("slot byte %d past the SGEs written (%#x); librxe leaves it", recvWQEHdr+2*sgeSize+i, b)
		}
	}

	// The refusals are the queue itself as an error, made without a call.
	for _, c := range []struct {
		name string
		sge  []provider.SGE
		want string
	}{
		{"5 SGEs on a 4-SGE queue", make([]provider.SGE, 5),
			"rxe: receive request with more SGEs than the queue takes (4): invalid argument"},
		{"4 GiB", []provider.SGE{{Length: math.MaxUint32}, {Length: 1}},
			"rxe: receive request of more than 4294967295 bytes: invalid argument"},
	} {
		if err := r.Put(&provider.RecvWR{SGE: c.sge}); !errors.Is(err, provider.ErrInvalid) || err.Error() != c.want {
			t.Errorf("%s: Put = %v, want %q", c.name, err, c.want)
		}
	}
	// 8 slots hold 7; one is in.
	for i := range 6 {
		if err := r.Put(&wr); err != nil {
			t.Fatalf("Put %d: %v", i, err)
		}
	}
	if err := r.Put(&wr); !errors.Is(err, provider.ErrFull) {
		t.Errorf("Put on a full RQ = %v, want ErrFull", err)
	}
	r.Flush()
	if p := producer(rqBuf); p != 7 {
		t.Errorf("producer = %d, want 7", p)
	}
}

func TestSRQ(t *testing.T) {
	buf := ring(6, 4, 0, 0) // 64-byte slots: one SGE
	dev := &fakeDev{maps: map[uint64][]byte{0: buf}}
	q, err := createSRQ(dev, provider.SRQInit{MaxWR: 100, MaxSGE: 100}, resp(t, abi.RxeCreateSRQResp{MI: mi(0, buf), SRQNum: 3}))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Put(&provider.RecvWR{ID: 1, SGE: make([]provider.SGE, 2)}); !errors.Is(err, provider.ErrInvalid) {
		t.Errorf("2 SGEs in a 64-byte slot: Put = %v, want EINVAL", err)
	}
	if err := q.Put(&provider.RecvWR{ID: 1, SGE: []provider.SGE{{Length: 8}}}); err != nil {
		t.Fatal(err)
	}
	if err := q.Flush(); err != nil || producer(buf) != 1 {
		t.Errorf("Flush = %v, producer = %d", err, producer(buf))
	}
	if err := q.Close(); err != nil || q.Close() != nil || dev.unmapped != 1 {
		t.Errorf("Close twice: %d munmaps, want 1", dev.unmapped)
	}
	if err := q.Put(&provider.RecvWR{}); err == nil {
		t.Error("Put on a closed SRQ succeeded")
	}
}

func TestRQAllocs(t *testing.T) {
	_, _, r, _, rqBuf := newQP(t, rcInit, 8, 4)
	var rqi provider.RQ = r
	wr := &provider.RecvWR{ID: 1, SGE: []provider.SGE{{Addr: 0x1000, Length: 64, LKey: 1}}}
	allocs := testing.AllocsPerRun(100, func() {
		if rqi.Put(wr) != nil || rqi.Flush() != nil {
			panic("Put/Flush")
		}
		setConsumer(rqBuf, producer(rqBuf))
	})
	if allocs != 0 {
		t.Errorf("Put+Flush allocates %v times per run", allocs)
	}
}

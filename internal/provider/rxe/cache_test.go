package rxe

import (
	"errors"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

// TestSQFreeCount checks the cached free-slot count against a kernel that
// consumes a few slots at a time: Put succeeds exactly while the ring has
// room and fails exactly when it has none.
func TestSQFreeCount(t *testing.T) {
	_, s, _, sqBuf, _ := newQP(t, rcInit, 8, 8) // 7 usable slots
	wr := provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND}
	inFlight := 0
	cons := uint32(0)
	for round := range 40 {
		for inFlight < 7 {
			if err := s.Put(&wr); err != nil {
				t.Fatalf("round %d: Put with %d in flight: %v", round, inFlight, err)
			}
			inFlight++
		}
		if err := s.Put(&wr); !errors.Is(err, provider.ErrFull) {
			t.Fatalf("round %d: Put on a full ring = %v", round, err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		k := round%7 + 1 // the kernel consumes k slots
		cons = (cons + uint32(k)) & 7
		setConsumer(sqBuf, cons)
		inFlight -= k
	}
}

// TestCQProducerCache checks that Poll sees completions the producer
// publishes while earlier ones are still being consumed.
func TestCQProducerCache(t *testing.T) {
	_, c, buf := newCQ(t, 8)
	var wc provider.WC
	id := uint64(0)
	put := func(n int) {
		for range n {
			p := producer(buf)
			putWC(t, buf, int(p), abi.WC{WrID: id}, 0)
			id++
			setProducer(buf, (p+1)&7)
		}
	}
	wantID := uint64(0)
	get := func(n int) {
		for range n {
			if !next(c, &wc) || wc.ID != wantID {
				t.Fatalf("Poll: %v, id %d, want %d", wc, wc.ID, wantID)
			}
			wantID++
		}
	}
	for range 10 {
		put(3)
		get(1)
		put(2)
		get(4)
		if next(c, &wc) {
			t.Fatal("Poll on an empty CQ found one")
		}
	}
}

package uverbs_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/internal/verbstest"
	"github.com/purerdma/purerdma/uverbs"
)

// TestCompletions flushes 12 receives (a QP moved to ERR, which rxe and
// siw both do) and takes their completions with cq.Completions: a loop
// broken after 5 leaves the other 7 in the CQ, where Poll finds them, and
// every completion is the one Poll would give, once, in posting order.
// Then it checks that a loop over the drained CQ neither yields nor
// allocates.
func TestCompletions(t *testing.T) {
	testenv.CheckLeaks(t)
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		r := newRig(t, d)
		qp := r.qp(t, uverbs.RC, nil)
		if err := qp.Init(1, rigAccess); err != nil {
			t.Fatalf("Init: %v", err)
		}
		const total, first = 12, 5
		var want []cq.WC
		for i := range total {
			id := uint64(i + 1)
			if n, err := qp.PostRecv([]uverbs.RecvWR{{ID: id, SGE: []uverbs.SGE{r.sge(i*8, 8)}}}); n != 1 || err != nil {
				t.Fatalf("PostRecv %d: %d, %v", id, n, err)
			}
			want = append(want, cq.WC{ID: id, Status: cq.WRFlushErr, QPNum: qp.Num()})
		}
		if err := qp.Modify(&uverbs.QPAttr{State: uverbs.QPSErr}, uverbs.QPAttrState); err != nil {
			t.Fatal(err)
		}
		// The flush may complete after Modify returns: loop until the
		// first 5, breaking out of the loop that yields the fifth.
		var got []cq.WC
		for deadline := time.Now().Add(5 * time.Second); len(got) < first; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d completions after 5s: %+v", len(got), first, got)
			}
			for wc, err := range r.cq.Completions(total) {
				if err != nil {
					t.Fatalf("Completions: %v", err)
				}
				got = append(got, wc)
				if len(got) == first {
					break
				}
			}
		}
		got = append(got, r.poll(t, total-first)...)
		if d.Hardware() {
			got = verbstest.Defined(got, false) // VendorErr is the device's
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("completions (-want +got):\n%s", diff)
		}

		for wc, err := range r.cq.Completions(total) {
			t.Errorf("drained CQ yielded %+v, %v", wc, err)
		}
		n := 0
		allocs := testing.AllocsPerRun(50, func() {
			for _, err := range r.cq.Completions(total) {
				if err == nil {
					n++
				}
			}
		})
		if allocs != 0 || n != 0 {
			t.Errorf("a loop over the empty CQ: %v allocations, %d completions; want 0, 0", allocs, n)
		}
	})
}

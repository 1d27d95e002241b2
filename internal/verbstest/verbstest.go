// Package verbstest holds the helpers the device tests of uverbs and
// rdmacm share: registering memory, waiting for completions and checking
// memory.
package verbstest

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// Memory registers size bytes in pd for access, deregistered and freed
// at the end of the test.
func Memory(t testing.TB, pd *uverbs.PD, size int, access uverbs.Access) ([]byte, *mr.MR) {
	t.Helper()
	buf, err := mr.Alloc(size)
	if err != nil {
		t.Fatal(err)
	}
	region, err := mr.Register(pd, buf, access)
	if err != nil {
		mr.Free(buf)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := region.Close(); err != nil {
			t.Errorf("MR close: %v", err)
		}
		mr.Free(buf)
	})
	return buf, region
}

// Poll waits up to five seconds for exactly n completions on q: it fails
// the test if fewer arrive, or if another one follows them.
func Poll(t testing.TB, q *cq.CQ, n int) []cq.WC {
	t.Helper()
	wc := make([]cq.WC, n)
	got := 0
	for deadline := time.Now().Add(5 * time.Second); got < n; {
		m, err := q.Poll(wc[got:])
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		got += m
		if m == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d completions after 5s: %+v", got, n, wc[:got])
			}
			time.Sleep(time.Millisecond)
		}
	}
	var extra [1]cq.WC
	if m, _ := q.Poll(extra[:]); m != 0 {
		t.Fatalf("unexpected extra completion %+v", extra[0])
	}
	return wc
}

// PollOne waits up to five seconds for one completion on q. Unlike Poll
// it returns an error instead of failing a test, for checks that run in
// other goroutines or inside other tests' helpers.
func PollOne(q *cq.CQ) (cq.WC, error) {
	var wc [1]cq.WC
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		n, err := q.Poll(wc[:])
		if err != nil || n == 1 {
			return wc[0], err
		}
	}
	return cq.WC{}, errors.New("no completion after 5s")
}

// SortWC returns the completions ordered by ID, for comparing completions
// whose relative order is the device's business.
func SortWC(wc []cq.WC) []cq.WC {
	if len(wc) == 0 {
		return nil
	}
	out := slices.Clone(wc)
	slices.SortStableFunc(out, func(a, b cq.WC) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

// Defined returns a copy of wc with only what ibv_poll_cq(3) defines for
// every device, for comparing a hardware device's completions with
// expectations that rxe and siw fill in to the last field (their values
// of the rest are in docs/kernel-notes.md). An error keeps ID, Status and
// QPNum: VendorErr is the device's own syndrome. A success also keeps
// Opcode; ByteLen of receives, RDMA reads and atomics; Imm with WithImm or
// WithInv on receives; and for UD receives (ud) GRH and SrcQP. SLID, SL,
// DLIDPathBits and PKeyIndex are left out: on RoCE they say nothing a
// test can know.
func Defined(wc []cq.WC, ud bool) []cq.WC {
	out := make([]cq.WC, len(wc))
	for i, w := range wc {
		d := cq.WC{ID: w.ID, Status: w.Status, QPNum: w.QPNum}
		if w.Status == cq.Success {
			d.Opcode = w.Opcode
			recv := w.Opcode&cq.OpRecv != 0
			switch {
			case recv:
				d.ByteLen = w.ByteLen
				d.Flags = w.Flags & (cq.WithImm | cq.WithInv)
				if d.Flags != 0 {
					d.Imm = w.Imm
				}
				if ud {
					d.Flags |= w.Flags & cq.GRH
					d.SrcQP = w.SrcQP
				}
			case w.Opcode == cq.OpRDMARead || w.Opcode == cq.OpCompSwap || w.Opcode == cq.OpFetchAdd:
				d.ByteLen = w.ByteLen
			}
		}
		out[i] = d
	}
	return out
}

// WantBytes fails the test unless got holds want.
func WantBytes(t testing.TB, got []byte, want string) {
	t.Helper()
	if !bytes.Equal(got, []byte(want)) {
		t.Errorf("memory = %q, want %q", got, want)
	}
}

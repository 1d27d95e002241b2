package cq

import (
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

// Host micro-benchmarks of the public layer's share of Poll: the copy of
// a provider completion into the caller's WC, and Poll around a fake ring
// that always has one.

var benchPWC = provider.WC{ID: 9, Opcode: abi.IB_WC_RECV, ByteLen: 4096, ImmData: 0x01020304,
	QPNum: 0x11, Flags: abi.IB_WC_WITH_IMM, PortNum: 1}

func BenchmarkWCFill(b *testing.B) {
	p := benchPWC
	var w WC
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.ID = uint64(i)
		w.fill(&p)
	}
	if w.Imm != 0x01020304 {
		b.Fatalf("fill: %+v", w)
	}
}

func BenchmarkWCFillError(b *testing.B) {
	p := provider.WC{ID: 9, Status: abi.IB_WC_WR_FLUSH_ERR, VendorErr: 7, QPNum: 0x11, Opcode: 3}
	var w WC
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.ID = uint64(i)
		w.fill(&p)
	}
	if w.Opcode != 0 {
		b.Fatalf("fill: %+v", w)
	}
}

// fakeRing is a provider.CQ that always has a completion.
type fakeRing struct{ wc provider.WC }

func (r *fakeRing) Arm(bool) bool { return false }
func (r *fakeRing) Poll(wc []provider.WC) int {
	for i := range wc {
		wc[i] = r.wc
	}
	return len(wc)
}
func (r *fakeRing) Take(wc *provider.WC) bool { *wc = r.wc; return true }
func (r *fakeRing) Release()                  {}
func (r *fakeRing) Resize([]byte) error       { return nil }
func (r *fakeRing) Close() error              { return nil }

// BenchmarkPoll16 is Poll of 16 completions from a ring that never runs
// dry: the lock, the interface calls and the copies, without the ring.
func BenchmarkPoll16(b *testing.B) {
	c := &CQ{ring: &fakeRing{wc: benchPWC}}
	wc := make([]WC, 16)
	b.ReportAllocs()
	for b.Loop() {
		if n, err := c.Poll(wc); n != 16 || err != nil {
			b.Fatal(n, err)
		}
	}
}

// emptyRing is a provider.CQ that never has a completion.
type emptyRing struct{}

func (emptyRing) Arm(bool) bool          { return false }
func (emptyRing) Poll([]provider.WC) int { return 0 }
func (emptyRing) Take(*provider.WC) bool { return false }
func (emptyRing) Release()               {}
func (emptyRing) Resize([]byte) error    { return nil }
func (emptyRing) Close() error           { return nil }

// BenchmarkPollEmpty is the busy-wait's turn: Poll of an empty CQ.
func BenchmarkPollEmpty(b *testing.B) {
	c := &CQ{ring: emptyRing{}}
	wc := make([]WC, 1)
	b.ReportAllocs()
	for b.Loop() {
		if n, err := c.Poll(wc); n != 0 || err != nil {
			b.Fatal(n, err)
		}
	}
}

// TestFill checks that fill sets every field, over a WC with stale values
// in all of them.
func TestFill(t *testing.T) {
	stale := WC{ID: 1, Status: 2, Opcode: 3, VendorErr: 4, ByteLen: 5, Imm: 6, QPNum: 7, SrcQP: 8,
		Flags: 9, PKeyIndex: 10, SLID: 11, SL: 12, DLIDPathBits: 13}
	ok := provider.WC{ID: 21, Opcode: 22, VendorErr: 23, ByteLen: 24, ImmData: 25, QPNum: 26, SrcQP: 27,
		Flags: 28, PKeyIndex: 29, SLID: 30, SL: 31, DLIDPathBits: 32, PortNum: 33}
	w := stale
	w.fill(&ok)
	if want := (WC{ID: 21, Opcode: 22, VendorErr: 23, ByteLen: 24, Imm: 25, QPNum: 26, SrcQP: 27,
		Flags: 28, PKeyIndex: 29, SLID: 30, SL: 31, DLIDPathBits: 32}); w != want {
		t.Errorf("success: fill = %+v, want %+v", w, want)
	}
	bad := ok
	bad.Status = abi.IB_WC_WR_FLUSH_ERR
	w = stale
	w.fill(&bad)
	if want := (WC{ID: 21, Status: WRFlushErr, VendorErr: 23, QPNum: 26}); w != want {
		t.Errorf("error: fill = %+v, want %+v", w, want)
	}
}

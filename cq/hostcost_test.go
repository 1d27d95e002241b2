package cq

import (
	"encoding/binary"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/conformance"
)

// The poll rows of the host cost table (make bench-host,
// docs/benchmarks-host.md): CQ.Poll through the real rxe provider over a
// Go ring of conformance.BenchSetup's size, against ibv_poll_cq through
// rdma-core's librxe over the harness's ring. Every slot holds a receive
// with immediate data; when a poll finds fewer than it asked for, the fake
// kernel makes the ring full again and the poll takes the rest.

func hostCQ(tb testing.TB) (*CQ, []byte) {
	tb.Helper()
	buf := conformance.RxeRing(6, conformance.BenchSetup.CQ)
	dev := &conformance.FakeDevice{Maps: map[uint64][]byte{1 << 12: buf}}
	var resp [16]byte // struct rxe_create_cq_resp: mi (offset u64, size u32, pad)
	binary.NativeEndian.PutUint64(resp[0:], 1<<12)
	binary.NativeEndian.PutUint32(resp[8:], uint32(len(buf)))
	d, ok := provider.Lookup(abi.RDMA_DRIVER_RXE)
	if !ok {
		tb.Fatal("no rxe provider")
	}
	ring, err := d.NewCQ(dev, resp[:])
	if err != nil {
		tb.Fatal(err)
	}
	return &CQ{ring: ring}, buf
}

func hostPoll(n int) func(b *testing.B) {
	return func(b *testing.B) {
		c, buf := hostCQ(b)
		conformance.RxeFillCQ(buf)
		wc := make([]WC, n)
		b.ReportAllocs()
		for b.Loop() {
			got, err := c.Poll(wc)
			if err != nil {
				b.Fatal(err)
			}
			if got < n {
				conformance.RxeRefillCQ(buf)
				if k, _ := c.Poll(wc[got:]); k != n-got {
					b.Fatal("poll after refill")
				}
			}
		}
		if wc[0].ID != 9 || wc[0].Imm != 0x01020304 {
			b.Fatalf("completion %+v", wc[0])
		}
	}
}

func hostPollEmpty(b *testing.B) {
	c, _ := hostCQ(b)
	wc := make([]WC, 1)
	b.ReportAllocs()
	for b.Loop() {
		if n, err := c.Poll(wc); n != 0 || err != nil {
			b.Fatal(n, err)
		}
	}
}

func TestHostCostPoll(t *testing.T) {
	conformance.HostCost(t, []conformance.CostRow{
		{Name: "pollempty", What: "poll an empty CQ (one busy-wait turn)", Iters: 10000000, Go: hostPollEmpty},
		{Name: "poll1", What: "poll 1 completion", Iters: 2000000, Go: hostPoll(1)},
		{Name: "poll16", What: "poll 16 completions", Iters: 500000, Go: hostPoll(16)},
	}, 5)
}

// The rows as benchmarks, for profiling: go test -bench HostPoll ./cq.
func BenchmarkHostPoll16(b *testing.B)    { hostPoll(16)(b) }
func BenchmarkHostPoll1(b *testing.B)     { hostPoll(1)(b) }
func BenchmarkHostPollEmpty(b *testing.B) { hostPollEmpty(b) }

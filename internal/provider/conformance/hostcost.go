package conformance

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// The host cost table: what one operation costs in user space, Go against
// rdma-core's librxe, libsiw and libmlx5 (hostcost_mlx5.go), over the same
// fake rings (the harnesses' bench rows and the Go benchmarks in
// uverbs/hostcost_test.go and cq/hostcost_test.go). Rounds alternate C and Go; the table has the
// median of each. `make bench-host` runs it.

// EnvBenchHost enables the host cost tests; EnvBenchHostOut names the
// file they append their rows to.
const (
	EnvBenchHost    = "PURERDMA_BENCH_HOST"
	EnvBenchHostOut = "PURERDMA_BENCH_HOST_OUT"
)

// BenchSetup is the rxe QP both sides time: rings of 1024 slots, send
// slots of 512 bytes (4 SGEs or 64 inline bytes), receive slots for 4
// SGEs. SiwBenchSetup is the same for siw.
var (
	BenchSetup    = Setup{Provider: "rxe", SQ: 1024, RQ: 1024, CQ: 1024, MaxSendSGE: 4, MaxRecvSGE: 4, MaxInline: 64}
	SiwBenchSetup = Setup{Provider: "siw", SQ: 1024, RQ: 1024, CQ: 1024, MaxSendSGE: 4, MaxRecvSGE: 4, MaxInline: 64}
)

// CostRow is one row of the table.
type CostRow struct {
	Name  string // the harness's bench row
	What  string // what one operation is, for the table
	Iters int    // C iterations in a round
	Go    func(b *testing.B)
}

// HostCost times rows on the provider of u in rounds, C then Go, and
// appends the medians to the file named by EnvBenchHostOut (or logs
// them). It skips unless EnvBenchHost is set.
func HostCost(t *testing.T, u Setup, rows []CostRow, rounds int) {
	if os.Getenv(EnvBenchHost) == "" {
		t.Skipf("host cost table: set %s=1 (make bench-host)", EnvBenchHost)
	}
	var h string
	if strings.HasPrefix(u.Provider, "mlx5") {
		h = HarnessMLX5(t)
	} else {
		h = Harness(t)
	}
	if f := flag.Lookup("test.benchtime"); f != nil {
		f.Value.Set("300ms")
	}
	cNs := map[string][]float64{}
	goNs := map[string][]float64{}
	allocs := map[string]int64{}
	for range rounds {
		var script strings.Builder
		fmt.Fprintf(&script, "%s %d %d %d %d %d %d %d %d\n", u.Provider, u.SQ, u.RQ, u.SRQ, u.CQ,
			u.MaxSendSGE, u.MaxRecvSGE, u.MaxInline, u.SRQMaxSGE)
		for _, r := range rows {
			fmt.Fprintf(&script, "bench %s %d\n", r.Name, r.Iters)
		}
		cmd := exec.Command(h)
		cmd.Stdin = strings.NewReader(script.String())
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("C harness: %v", err)
		}
		for _, l := range Lines(string(out)) {
			f := strings.Fields(l)
			if len(f) == 3 && f[0] == "bench" {
				v, err := strconv.ParseFloat(f[2], 64)
				if err != nil {
					t.Fatal(err)
				}
				cNs[f[1]] = append(cNs[f[1]], v)
			}
		}
		for _, r := range rows {
			res := testing.Benchmark(r.Go)
			if res.N == 0 {
				t.Fatalf("Go %s failed", r.Name)
			}
			goNs[r.Name] = append(goNs[r.Name], float64(res.T.Nanoseconds())/float64(res.N))
			allocs[r.Name] = max(allocs[r.Name], res.AllocsPerOp())
		}
	}
	var lines []string
	for _, r := range rows {
		g, c := median(goNs[r.Name]), median(cNs[r.Name])
		if c == 0 {
			t.Fatalf("no C time for %s", r.Name)
		}
		lines = append(lines, fmt.Sprintf("%s %s\t%s\t%.1f\t%.1f\t%.2f\t%d", u.Provider, r.Name, r.What, g, c, g/c, allocs[r.Name]))
		t.Logf("%s %-10s Go %7.1f ns  C %7.1f ns  Go/C %.2f  %d allocs/op", u.Provider, r.Name, g, c, g/c, allocs[r.Name])
	}
	if p := os.Getenv(EnvBenchHostOut); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// RxeRing returns a Go rxe_queue_buf of n slots of 1<<log2 bytes, indices
// zero: the 384-byte header (log2_elem_size, index_mask, producer at 128,
// consumer at 256), then the slots.
func RxeRing(log2, n uint32) []byte {
	b := make([]byte, 384+int(n)<<log2)
	binary.NativeEndian.PutUint32(b[0:], log2)
	binary.NativeEndian.PutUint32(b[4:], n-1)
	return b
}

// RxeIndex returns the producer (at 128) or consumer (at 256) index of an
// rxe ring as the atomic word the kernel side uses.
func RxeIndex(b []byte, producer bool) *atomic.Uint32 {
	off := 256
	if producer {
		off = 128
	}
	return mem.Uint32(b, off)
}

// RxeFillCQ writes the receive-with-immediate completion the bench rows
// poll into every slot of an rxe CQ ring of 64-byte slots, and fills the
// ring (as the harness does).
func RxeFillCQ(b []byte) {
	n := binary.NativeEndian.Uint32(b[4:]) + 1
	for i := range n {
		s := b[384+int(i)*64:]
		clear(s[:64])
		binary.NativeEndian.PutUint64(s[0:], 9)
		binary.NativeEndian.PutUint32(s[12:], abi.IB_WC_RECV)
		binary.NativeEndian.PutUint32(s[20:], 4096)
		binary.BigEndian.PutUint32(s[24:], 0x01020304) // imm_data is big-endian
		binary.NativeEndian.PutUint32(s[28:], 0x11)
		binary.NativeEndian.PutUint32(s[36:], abi.IB_WC_WITH_IMM)
	}
	RxeRefillCQ(b)
}

// RxeRefillCQ makes the CQ ring full again of the entries in it.
func RxeRefillCQ(b []byte) {
	n := binary.NativeEndian.Uint32(b[4:]) + 1
	RxeIndex(b, true).Store((RxeIndex(b, false).Load() + n - 1) % n)
}

// FakeDevice is a provider.Device whose mappings are Go byte slices and
// whose doorbell counts.
type FakeDevice struct {
	Maps      map[uint64][]byte
	Doorbells int
}

// Mmap returns the mapping registered at offset.
func (d *FakeDevice) Mmap(offset uint64, size int) ([]byte, error) {
	b, ok := d.Maps[offset]
	if !ok || size > len(b) {
		return nil, errors.New("fake device: no such mapping")
	}
	return b[:size], nil
}

// Munmap does nothing.
func (d *FakeDevice) Munmap([]byte) error { return nil }

// Doorbell counts.
func (d *FakeDevice) Doorbell(uint32) error { d.Doorbells++; return nil }

// CreateCQ makes the CQ of driver d on dev from its
// CREATE_CQ response, through a context of the driver and both halves of
// the create, as uverbs does (the drivers here send no request data).
func CreateCQ(d provider.Driver, dev provider.Device, resp []byte) (provider.CQ, error) {
	ctx, err := d.NewContext(dev)
	if err != nil {
		return nil, err
	}
	p, err := ctx.CreateCQ(&provider.CQInit{}, nil)
	if err != nil {
		return nil, err
	}
	return p.Finish(resp)
}

// CreateQP is CreateCQ for a QP; init is both what was asked for and
// what the kernel granted.
func CreateQP(d provider.Driver, dev provider.Device, init provider.QPInit, resp []byte) (provider.Queues, error) {
	ctx, err := d.NewContext(dev)
	if err != nil {
		return provider.Queues{}, err
	}
	asked := init
	p, err := ctx.CreateQP(&asked, nil)
	if err != nil {
		return provider.Queues{}, err
	}
	asked = init // the kernel's answer
	return p.Finish(resp)
}

// CreateSRQ is CreateQP for an SRQ.
func CreateSRQ(d provider.Driver, dev provider.Device, init provider.SRQInit, resp []byte) (provider.RQ, error) {
	ctx, err := d.NewContext(dev)
	if err != nil {
		return nil, err
	}
	asked := init
	p, err := ctx.CreateSRQ(&asked, nil)
	if err != nil {
		return nil, err
	}
	asked = init // the kernel's answer
	return p.Finish(resp)
}

// SiwTake plays the kernel taking every element of a siw work queue of
// elements of size bytes: it clears their flags. The benchmarks are one
// goroutine, so the fake kernel writes plainly, as the harness's does
// (a release store, a plain MOV on amd64): an atomic Store per element,
// an XCHG, would charge the Go rows for the fake kernel.
func SiwTake(b []byte, size int) {
	for off := 0; off+size <= len(b); off += size {
		binary.NativeEndian.PutUint16(b[off+8:], 0)
	}
}

// SiwFillCQ writes the receive completion the bench rows poll into every
// element of a siw CQ of n elements and makes them all valid.
func SiwFillCQ(b []byte, n int) {
	for i := range n {
		e := b[i*32 : i*32+32]
		clear(e)
		binary.NativeEndian.PutUint64(e[0:], 9)
		binary.NativeEndian.PutUint32(e[12:], 4096)
		binary.NativeEndian.PutUint64(e[24:], 0x11)
	}
	SiwRefillCQ(b, n)
}

// SiwRefillCQ makes every element of a siw CQ valid again: flags VALID,
// opcode RECEIVE, status 0; written plainly, as SiwTake.
func SiwRefillCQ(b []byte, n int) {
	for i := range n {
		binary.NativeEndian.PutUint32(b[i*32+8:], abi.SIW_WQE_VALID|abi.SIW_OP_RECEIVE<<8)
	}
}

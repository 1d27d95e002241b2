package rxe

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// Host micro-benchmarks of the user-space data path: what Put, Flush and
// Next cost without a kernel behind the rings. The fake device counts
// doorbells instead of making the POST_SEND system call, and the
// benchmarks play the kernel's part by moving the consumer index of the
// work queues and the producer index of the CQ.

// benchRing is the number of slots of the benchmark rings; the fake kernel
// catches up every benchDrain Puts, so the ring never fills.
const (
	benchRing  = 1024
	benchDrain = 256
)

func benchResp(b *testing.B, v any) []byte {
	b.Helper()
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.NativeEndian, v); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// benchQP maps a QP whose send queue has benchRing slots of 1<<sqLog2
// bytes and whose receive queue has benchRing slots of 128 bytes.
func benchQP(b *testing.B, init provider.QPInit, sqLog2 uint32) (*fakeDev, provider.SQ, provider.RQ, []byte, []byte) {
	b.Helper()
	sqBuf, rqBuf := ring(sqLog2, benchRing, 0, 0), ring(7, benchRing, 0, 0)
	dev := &fakeDev{maps: map[uint64][]byte{4096: rqBuf, 8192: sqBuf}}
	r := benchResp(b, abi.RxeCreateQPResp{RQMI: mi(4096, rqBuf), SQMI: mi(8192, sqBuf)})
	s, q, err := createQP(dev, init, r)
	if err != nil {
		b.Fatal(err)
	}
	return dev, s, q, sqBuf, rqBuf
}

// kernelConsume plays the kernel: it consumes every published slot.
func kernelConsume(buf []byte) {
	mem.Uint32(buf, offConsumer).Store(mem.Uint32(buf, offProducer).Load())
}

var benchInit = provider.QPInit{
	Handle: 7, QPNum: 0x11, Type: abi.IB_UVERBS_QPT_RC,
	MaxSendWR: benchRing - 1, MaxRecvWR: benchRing - 1,
	MaxSendSGE: 4, MaxRecvSGE: 4, MaxInline: 256,
}

// BenchmarkSQPutRDMAWrite builds one send WQE: an RDMA write with one SGE.
// Every benchDrain Puts it flushes and lets the fake kernel consume them.
func BenchmarkSQPutRDMAWrite(b *testing.B) {
	dev, s, _, sqBuf, _ := benchQP(b, benchInit, 9)
	sge := []provider.SGE{{Addr: 0x10000, Length: 4096, LKey: 0x55}}
	wr := provider.SendWR{ID: 1, Opcode: abi.IB_UVERBS_WR_RDMA_WRITE, Flags: abi.IB_SEND_SIGNALED,
		SGE: sge, RemoteAddr: 0xdead0000, RKey: 0x77}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		wr.ID = uint64(i)
		if err := s.Put(&wr); err != nil {
			b.Fatal(err)
		}
		if i%benchDrain == benchDrain-1 {
			s.Flush()
			kernelConsume(sqBuf)
		}
	}
	_ = dev
}

// BenchmarkSQPutFlush16 puts a batch of 16 RDMA writes and flushes them
// with one doorbell, as PostSend does with a 16-request slice.
func BenchmarkSQPutFlush16(b *testing.B) {
	dev, s, _, sqBuf, _ := benchQP(b, benchInit, 9)
	sge := []provider.SGE{{Addr: 0x10000, Length: 4096, LKey: 0x55}}
	wr := provider.SendWR{ID: 1, Opcode: abi.IB_UVERBS_WR_RDMA_WRITE, Flags: abi.IB_SEND_SIGNALED,
		SGE: sge, RemoteAddr: 0xdead0000, RKey: 0x77}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for j := range 16 {
			wr.ID = uint64(j)
			if err := s.Put(&wr); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Flush(); err != nil {
			b.Fatal(err)
		}
		n++
		if n%(benchDrain/16) == 0 {
			kernelConsume(sqBuf)
		}
	}
	if dev.doorbells != n {
		b.Fatalf("%d doorbells for %d batches", dev.doorbells, n)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*16), "ns/wqe")
}

var inlineData = bytes.Repeat([]byte{0xa5}, 64)

// BenchmarkSQPutInline64 puts a 64-byte inline send.
func BenchmarkSQPutInline64(b *testing.B) {
	_, s, _, sqBuf, _ := benchQP(b, benchInit, 9)
	sge := []provider.SGE{{Addr: addr(inlineData), Length: uint32(len(inlineData))}}
	wr := provider.SendWR{ID: 1, Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_SIGNALED | abi.IB_SEND_INLINE, SGE: sge}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		wr.ID = uint64(i)
		if err := s.Put(&wr); err != nil {
			b.Fatal(err)
		}
		if i%benchDrain == benchDrain-1 {
			s.Flush()
			kernelConsume(sqBuf)
		}
	}
}

// BenchmarkRQPut puts a receive request with one SGE.
func BenchmarkRQPut(b *testing.B) {
	_, _, r, _, rqBuf := benchQP(b, benchInit, 9)
	sge := []provider.SGE{{Addr: 0x20000, Length: 4096, LKey: 0x66}}
	wr := provider.RecvWR{ID: 1, SGE: sge}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		wr.ID = uint64(i)
		if err := r.Put(&wr); err != nil {
			b.Fatal(err)
		}
		if i%benchDrain == benchDrain-1 {
			r.Flush()
			kernelConsume(rqBuf)
		}
	}
}

// BenchmarkCQPoll1 consumes completions one Poll at a time from a ring a
// fake producer fills: every slot holds a 48-byte ib_uverbs_wc written up
// front (a receive with immediate data), and whenever Poll finds the ring
// empty the producer index moves forward to make it full again; the
// entries are still there, since consuming does not clear them.
func BenchmarkCQPoll1(b *testing.B) {
	buf := ring(7, benchRing, 0, 0)
	dev := &fakeDev{maps: map[uint64][]byte{4096: buf}}
	pc, err := createCQ(dev, benchResp(b, abi.RxeCreateCQResp{MI: mi(4096, buf)}))
	if err != nil {
		b.Fatal(err)
	}
	entry := benchResp(b, abi.WC{WrID: 9, Opcode: abi.IB_WC_RECV, ByteLen: 4096, QPNum: 0x11,
		WCFlags: abi.IB_WC_WITH_IMM, Ex: beSwap(0x01020304)})
	if len(entry) != wcSize {
		b.Fatalf("ib_uverbs_wc is %d bytes", len(entry))
	}
	for i := range benchRing {
		copy(slotOf(buf, i), entry)
	}
	prod := mem.Uint32(buf, offProducer)
	cons := mem.Uint32(buf, offConsumer)
	refill := func() { prod.Store((cons.Load() + benchRing - 1) % benchRing) }
	refill()
	// On the heap once, as cq.CQ's scratch: a slice passed through the
	// interface escapes.
	wcs := make([]provider.WC, 1)
	b.ReportAllocs()
	for b.Loop() {
		if pc.Poll(wcs) != 1 {
			refill()
			if pc.Poll(wcs) != 1 {
				b.Fatal("no completion after refill")
			}
		}
	}
	if wc := wcs[0]; wc.ID != 9 || wc.ImmData != 0x01020304 {
		b.Fatalf("completion %+v", wc)
	}
}

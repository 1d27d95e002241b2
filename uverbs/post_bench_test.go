package uverbs

import (
	"testing"

	"github.com/purerdma/purerdma/internal/provider"
)

// Host micro-benchmarks of the public layer's share of PostSend: the
// checks and the copy of the caller's SendWR into the provider scratch,
// with a send queue that only counts.

type countSQ struct{ puts, flushes int }

func (s *countSQ) Put(wr *provider.SendWR) error { s.puts++; return nil }
func (s *countSQ) Flush() error                  { s.flushes++; return nil }
func (s *countSQ) Idle() bool                    { return true }
func (s *countSQ) Close() error                  { return nil }

func benchQP() (*QP, *countSQ) {
	sq := &countSQ{}
	qp := &QP{
		typ:  RC,
		cap:  QPCap{MaxSendWR: 256, MaxRecvWR: 256, MaxSendSGE: 4, MaxRecvSGE: 4, MaxInlineData: 64},
		ssge: make([]provider.SGE, 4),
	}
	qp.setSQ(sq)
	qp.setNoReads(false)
	return qp, sq
}

func BenchmarkPutSendCopy(b *testing.B) {
	qp, sq := benchQP()
	sge := []SGE{{Addr: 0x10000, Length: 4096, LKey: 0x55}}
	wr := SendWR{ID: 1, Opcode: WRRDMAWrite, Flags: SendSignaled, SGE: sge, RemoteAddr: 0xdead0000, RKey: 0x77}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		wr.ID = uint64(i)
		if err := qp.putSendChecked(&wr); err != nil {
			b.Fatal(err)
		}
	}
	if sq.puts == 0 || qp.swr.RKey != 0x77 {
		b.Fatal("no put")
	}
}

// BenchmarkPostSend16 is PostSend of 16 RDMA writes on the counting queue:
// the lock, the copies and one Flush.
func BenchmarkPostSend16(b *testing.B) {
	qp, sq := benchQP()
	sge := []SGE{{Addr: 0x10000, Length: 4096, LKey: 0x55}}
	wrs := make([]SendWR, 16)
	for i := range wrs {
		wrs[i] = SendWR{ID: uint64(i), Opcode: WRRDMAWrite, Flags: SendSignaled, SGE: sge, RemoteAddr: 0xdead0000, RKey: 0x77}
	}
	b.ReportAllocs()
	for b.Loop() {
		if n, err := qp.PostSend(wrs); n != 16 || err != nil {
			b.Fatal(n, err)
		}
	}
	if sq.flushes == 0 {
		b.Fatal("no flush")
	}
}

// BenchmarkPostRecv16 is postRecv of 16 one-SGE requests on a counting
// receive queue.
func BenchmarkPostRecv16(b *testing.B) {
	r := recvSide{sge: make([]provider.SGE, 4), size: 256}
	r.setRQ(&countRQ{})
	s := []SGE{{Addr: 0x20000, Length: 4096, LKey: 0x66}}
	wrs := make([]RecvWR, 16)
	for i := range wrs {
		wrs[i] = RecvWR{ID: uint64(i), SGE: s}
	}
	b.ReportAllocs()
	for b.Loop() {
		if n, err := r.post(wrs); n != 16 || err != nil {
			b.Fatal(n, err)
		}
	}
}

type countRQ struct{ puts, flushes int }

func (r *countRQ) Put(wr *provider.RecvWR) error { r.puts++; return nil }
func (r *countRQ) Flush() error                  { r.flushes++; return nil }
func (r *countRQ) Close() error                  { return nil }

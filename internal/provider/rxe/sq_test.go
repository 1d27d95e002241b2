package rxe

import (
	"bytes"
	"errors"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

var rcInit = provider.QPInit{Handle: 7, QPNum: 0x11, Type: abi.IB_UVERBS_QPT_RC, MaxSendSGE: 3, MaxRecvSGE: 4, MaxInline: 48}

func union(t *testing.T, v any) (u [120]byte) {
	t.Helper()
	copy(u[:], resp(t, v))
	return u
}

func TestSQPutOpcodes(t *testing.T) {
	sges := []provider.SGE{{Addr: 0x1000, Length: 100, LKey: 0x55}, {Addr: 0x2000, Length: 28, LKey: 0x66}}
	rsges := []abi.RxeSGE{{Addr: 0x1000, Length: 100, LKey: 0x55}, {Addr: 0x2000, Length: 28, LKey: 0x66}}
	dma := abi.RxeDMAInfo{Length: 128, Resid: 128, NumSGE: 2}
	ud := rcInit
	ud.Type = abi.IB_UVERBS_QPT_UD
	tests := []struct {
		name string
		init provider.QPInit
		wr   provider.SendWR
		want abi.RxeSendWQE
	}{{
		name: "send",
		init: rcInit,
		wr:   provider.SendWR{ID: 1, Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_SIGNALED, SGE: sges},
		want: abi.RxeSendWQE{Wr: abi.RxeSendWr{WrID: 1, Opcode: abi.IB_UVERBS_WR_SEND, SendFlags: abi.IB_SEND_SIGNALED}, Dma: dma},
	}, {
		name: "send with imm is big-endian",
		init: rcInit,
		wr:   provider.SendWR{ID: 2, Opcode: abi.IB_UVERBS_WR_SEND_WITH_IMM, Imm: 0x01020304, SGE: sges},
		want: abi.RxeSendWQE{Wr: abi.RxeSendWr{WrID: 2, Opcode: abi.IB_UVERBS_WR_SEND_WITH_IMM, Ex: beSwap(0x01020304)}, Dma: dma},
	}, {
		name: "send with invalidate is host order",
		init: rcInit,
		wr:   provider.SendWR{ID: 3, Opcode: abi.IB_UVERBS_WR_SEND_WITH_INV, Imm: 0xabcd, SGE: sges},
		want: abi.RxeSendWQE{Wr: abi.RxeSendWr{WrID: 3, Opcode: abi.IB_UVERBS_WR_SEND_WITH_INV, Ex: 0xabcd}, Dma: dma},
	}, {
		name: "local invalidate",
		init: rcInit,
		wr:   provider.SendWR{ID: 4, Opcode: abi.IB_UVERBS_WR_LOCAL_INV, Imm: 0x1234},
		want: abi.RxeSendWQE{Wr: abi.RxeSendWr{WrID: 4, Opcode: abi.IB_UVERBS_WR_LOCAL_INV, Ex: 0x1234}},
	}, {
		name: "rdma write",
		init: rcInit,
		wr:   provider.SendWR{ID: 5, Opcode: abi.IB_UVERBS_WR_RDMA_WRITE, SGE: sges, RemoteAddr: 0xdead0000, RKey: 0x77, Imm: 0x99},
		want: abi.RxeSendWQE{
			Wr:   abi.RxeSendWr{WrID: 5, Opcode: abi.IB_UVERBS_WR_RDMA_WRITE, Wr: union(t, abi.RxeSendWrRDMA{RemoteAddr: 0xdead0000, RKey: 0x77})},
			Iova: 0xdead0000, Dma: dma,
		},
	}, {
		name: "rdma write with imm",
		init: rcInit,
		wr:   provider.SendWR{ID: 6, Opcode: abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, SGE: sges, RemoteAddr: 0xbeef000, RKey: 0x78, Imm: 0xa0b0c0d0},
		want: abi.RxeSendWQE{
			Wr: abi.RxeSendWr{WrID: 6, Opcode: abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, Ex: beSwap(0xa0b0c0d0),
				Wr: union(t, abi.RxeSendWrRDMA{RemoteAddr: 0xbeef000, RKey: 0x78})},
			Iova: 0xbeef000, Dma: dma,
		},
	}, {
		name: "rdma read",
		init: rcInit,
		wr:   provider.SendWR{ID: 7, Opcode: abi.IB_UVERBS_WR_RDMA_READ, Flags: abi.IB_SEND_FENCE, SGE: sges, RemoteAddr: 0x4000, RKey: 0x79},
		want: abi.RxeSendWQE{
			Wr:   abi.RxeSendWr{WrID: 7, Opcode: abi.IB_UVERBS_WR_RDMA_READ, SendFlags: abi.IB_SEND_FENCE, Wr: union(t, abi.RxeSendWrRDMA{RemoteAddr: 0x4000, RKey: 0x79})},
			Iova: 0x4000, Dma: dma,
		},
	}, {
		name: "compare and swap",
		init: rcInit,
		wr: provider.SendWR{ID: 8, Opcode: abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, SGE: sges[:1], RemoteAddr: 0x8008, RKey: 0x7a,
			CompareAdd: 0x1111, Swap: 0x2222},
		want: abi.RxeSendWQE{
			Wr: abi.RxeSendWr{WrID: 8, Opcode: abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP,
				Wr: union(t, abi.RxeSendWrAtomic{RemoteAddr: 0x8008, CompareAdd: 0x1111, Swap: 0x2222, RKey: 0x7a})},
			Iova: 0x8008, Dma: abi.RxeDMAInfo{Length: 100, Resid: 100, NumSGE: 1},
		},
	}, {
		name: "fetch and add",
		init: rcInit,
		wr:   provider.SendWR{ID: 9, Opcode: abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD, SGE: sges[:1], RemoteAddr: 0x8010, RKey: 0x7b, CompareAdd: 5},
		want: abi.RxeSendWQE{
			Wr: abi.RxeSendWr{WrID: 9, Opcode: abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD,
				Wr: union(t, abi.RxeSendWrAtomic{RemoteAddr: 0x8010, CompareAdd: 5, RKey: 0x7b})},
			Iova: 0x8010, Dma: abi.RxeDMAInfo{Length: 100, Resid: 100, NumSGE: 1},
		},
	}, {
		name: "bind memory window",
		init: rcInit,
		wr: provider.SendWR{ID: 11, Opcode: abi.IB_UVERBS_WR_BIND_MW, Flags: abi.IB_SEND_SIGNALED, RKey: 0x1235,
			BindAddr: 0x7000, BindLength: 4096, BindLKey: 0x99, BindAccess: abi.IB_UVERBS_ACCESS_REMOTE_READ, MWRKey: 0x1234},
		want: abi.RxeSendWQE{
			Wr: abi.RxeSendWr{WrID: 11, Opcode: abi.IB_UVERBS_WR_BIND_MW, SendFlags: abi.IB_SEND_SIGNALED,
				Wr: union(t, abi.RxeSendWrMW{Addr: 0x7000, Length: 4096, MRLKey: 0x99, MWRKey: 0x1234, RKey: 0x1235,
					Access: abi.IB_UVERBS_ACCESS_REMOTE_READ})},
		},
	}, {
		name: "UD send",
		init: ud,
		wr:   provider.SendWR{ID: 10, Opcode: abi.IB_UVERBS_WR_SEND_WITH_IMM, Imm: 1, SGE: sges, AH: &provider.AH{Num: 3}, RemoteQPN: 0x123, RemoteQKey: 0x11111111},
		want: abi.RxeSendWQE{
			Wr: abi.RxeSendWr{WrID: 10, Opcode: abi.IB_UVERBS_WR_SEND_WITH_IMM, Ex: beSwap(1),
				Wr: union(t, abi.RxeSendWrUD{RemoteQPN: 0x123, RemoteQKey: 0x11111111, AHNum: 3})},
			Dma: dma,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev, s, _, sqBuf, _ := newQP(t, tt.init, 8, 4)
			slot := slotOf(sqBuf, 0)
			for i := range slot {
				slot[i] = 0xee // a previous request's and the kernel's bytes
			}
			if err := s.Put(&tt.wr); err != nil {
				t.Fatal(err)
			}
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			got := decode[abi.RxeSendWQE](t, slot)
			if diff := cmp.Diff(withStale(tt.want), got); diff != "" {
				t.Errorf("WQE (-want +got):\n%s", diff)
			}
			var gotSGE []abi.RxeSGE
			for i := range tt.wr.SGE {
				gotSGE = append(gotSGE, decode[abi.RxeSGE](t, slot[sendWQEHdr+i*sgeSize:]))
			}
			if diff := cmp.Diff(rsges[:len(tt.wr.SGE)], gotSGE, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("SGEs (-want +got):\n%s", diff)
			}
			if rest := slot[sendWQEHdr+len(tt.wr.SGE)*sgeSize:]; !bytes.Equal(rest, bytes.Repeat([]byte{0xee}, len(rest))) {
				t.Errorf("slot tail past the SGEs written: % x", rest)
			}
			if p := producer(sqBuf); p != 1 {
				t.Errorf("producer = %d, want 1", p)
			}
			if dev.doorbells != 1 || dev.lastQP != tt.init.Handle {
				t.Errorf("doorbells = %d on QP %d, want 1 on %d", dev.doorbells, dev.lastQP, tt.init.Handle)
			}
		})
	}
}

// withStale is w with the fields librxe's init_send_wqe leaves as the slot
// held them (0xee bytes in the tests) where Put leaves them too: the
// status, mask, PSNs, ack length and has_rd_atomic are the kernel's
// bookkeeping, which its requester and completer write before they read
// them (req_next_wqe sets the mask, update_wqe_psn the PSNs, the completer
// the status and, when it retires a read or atomic, has_rd_atomic back to
// 0), and dma.reserved is read by no one. What the kernel reads of a new
// request (rxe_send_wr, iova, state, ssn, the DMA counters, the SGEs in
// use or the inline data) is written; the bytes past those stay stale,
// under librxe as here, so the ring holds the same bytes under both.
func withStale(w abi.RxeSendWQE) abi.RxeSendWQE {
	const stale = 0xeeeeeeee
	w.Status, w.Mask, w.FirstPSN, w.LastPSN, w.AckLength, w.HasRdAtomic = stale, stale, stale, stale, stale, stale
	w.Dma.Reserved = stale
	return w
}

func TestSQInline(t *testing.T) {
	_, s, _, sqBuf, _ := newQP(t, rcInit, 8, 4)
	a, b := []byte("hello, "), []byte("inline world")
	wr := provider.SendWR{ID: 1, Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_INLINE | abi.IB_SEND_SIGNALED,
		SGE: []provider.SGE{{Addr: addr(a), Length: uint32(len(a))}, {Addr: addr(b), Length: uint32(len(b))}}}
	if err := s.Put(&wr); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	slot := slotOf(sqBuf, 0)
	want := "hello, inline world"
	if got := string(slot[sendWQEHdr : sendWQEHdr+len(want)]); got != want {
		t.Errorf("inline data = %q, want %q", got, want)
	}
	got := decode[abi.RxeSendWQE](t, slot)
	wantDMA := abi.RxeDMAInfo{Length: uint32(len(want)), Resid: uint32(len(want)), NumSGE: 2}
	if diff := cmp.Diff(wantDMA, got.Dma); diff != "" {
		t.Errorf("dma (-want +got):\n%s", diff)
	}
}

func TestSQPutErrors(t *testing.T) {
	big := make([]byte, 49)
	tests := []struct {
		name string
		wr   provider.SendWR
		want error
	}{
		{"too many SGEs", provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, SGE: make([]provider.SGE, 4)}, provider.ErrInvalid},
		{"too much inline", provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_INLINE,
			SGE: []provider.SGE{{Addr: addr(big), Length: 49}}}, provider.ErrInvalid},
		{"misaligned atomic", provider.SendWR{Opcode: abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD, RemoteAddr: 4,
			SGE: []provider.SGE{{Length: 8}}}, provider.ErrInvalid},
		{"short atomic buffer", provider.SendWR{Opcode: abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, SGE: []provider.SGE{{Length: 4}}}, provider.ErrInvalid},
		{"bind mw with an SGE", provider.SendWR{Opcode: abi.IB_UVERBS_WR_BIND_MW, SGE: []provider.SGE{{Length: 8}}}, provider.ErrInvalid},
		{"tso", provider.SendWR{Opcode: abi.IB_UVERBS_WR_TSO}, provider.ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev, s, _, sqBuf, _ := newQP(t, rcInit, 8, 4)
			if err := s.Put(&tt.wr); !errors.Is(err, tt.want) {
				t.Fatalf("Put = %v, want %v", err, tt.want)
			}
			if err := s.Flush(); err != nil || dev.doorbells != 0 || producer(sqBuf) != 0 {
				t.Errorf("after a refused Put: Flush = %v, doorbells = %d, producer = %d", err, dev.doorbells, producer(sqBuf))
			}
		})
	}
	runtime.KeepAlive(big)

	// The slot, not only MaxSendSGE, bounds the SGEs: a 256-byte slot
	// has room for 3 after the 208-byte header.
	_, s, _, _, _ := newQP(t, rcInit, 8, 4)
	s.init.MaxSendSGE = 8 // as if the caller lied about the limit
	if err := s.Put(&provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, SGE: make([]provider.SGE, 4)}); !errors.Is(err, provider.ErrInvalid) {
		t.Errorf("SGEs beyond the slot: Put = %v, want EINVAL", err)
	}

	ud := rcInit
	ud.Type = abi.IB_UVERBS_QPT_UD
	_, s, _, _, _ = newQP(t, ud, 8, 4)
	if err := s.Put(&provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND}); !errors.Is(err, provider.ErrInvalid) {
		t.Errorf("UD send without AH: Put = %v, want EINVAL", err)
	}
	// A number of 0 is what kernels before 5.16 answer CREATE_AH with.
	if err := s.Put(&provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, AH: &provider.AH{}}); !errors.Is(err, provider.ErrInvalid) {
		t.Errorf("UD send with AH number 0: Put = %v, want EINVAL", err)
	}
}

func TestSQBatchDoorbell(t *testing.T) {
	dev, s, _, sqBuf, _ := newQP(t, rcInit, 8, 8)
	if err := s.Flush(); err != nil || dev.doorbells != 0 {
		t.Fatalf("empty Flush = %v with %d doorbells, want none", err, dev.doorbells)
	}
	wr := provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND}
	for i := range 3 {
		wr.ID = uint64(i)
		if err := s.Put(&wr); err != nil {
			t.Fatal(err)
		}
		if p := producer(sqBuf); p != 0 {
			t.Fatalf("Put %d published the producer (%d)", i, p)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if p := producer(sqBuf); dev.doorbells != 1 || p != 3 {
		t.Errorf("after 3 Puts and a Flush: %d doorbells, producer %d; want 1, 3", dev.doorbells, p)
	}
	for i := range 3 {
		if id := decode[abi.RxeSendWQE](t, slotOf(sqBuf, i)).Wr.WrID; id != uint64(i) {
			t.Errorf("slot %d wr_id = %d", i, id)
		}
	}
	if err := s.Flush(); err != nil || dev.doorbells != 1 {
		t.Errorf("second Flush = %v with %d doorbells, want still 1", err, dev.doorbells)
	}
}

func TestSQRing(t *testing.T) {
	tests := []struct {
		name       string
		prod, cons uint32
		puts       int // Puts that succeed before ErrFull
		wantProd   uint32
	}{
		{"empty", 0, 0, 3, 3},
		{"one in flight", 1, 0, 2, 3},
		{"full", 3, 0, 0, 3},
		{"full, wrapped", 1, 2, 0, 1},
		{"wraps at the mask", 3, 3, 3, 2},
		{"wraps past the mask", 2, 2, 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev, s, _, sqBuf, _ := newQP(t, rcInit, 8, 4)
			setProducer(sqBuf, tt.prod)
			setConsumer(sqBuf, tt.cons)
			s.pending, s.published = tt.prod, tt.prod
			wr := provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND}
			for i := 0; i < tt.puts; i++ {
				wr.ID = uint64(100 + i)
				if err := s.Put(&wr); err != nil {
					t.Fatalf("Put %d: %v", i, err)
				}
			}
			if err := s.Put(&wr); !errors.Is(err, provider.ErrFull) {
				t.Fatalf("Put on a full ring = %v, want ErrFull", err)
			}
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			if p := producer(sqBuf); p != tt.wantProd {
				t.Errorf("producer = %d, want %d", p, tt.wantProd)
			}
			if want := min(tt.puts, 1); dev.doorbells != want {
				t.Errorf("doorbells = %d, want %d", dev.doorbells, want)
			}
			for i := 0; i < tt.puts; i++ {
				slot := (int(tt.prod) + i) & 3
				if id := decode[abi.RxeSendWQE](t, slotOf(sqBuf, slot)).Wr.WrID; id != uint64(100+i) {
					t.Errorf("slot %d wr_id = %d, want %d", slot, id, 100+i)
				}
			}
			// The kernel consumes everything: there is room again.
			setConsumer(sqBuf, tt.wantProd)
			if err := s.Put(&wr); err != nil {
				t.Errorf("Put after the kernel drained the ring: %v", err)
			}
		})
	}
}

func TestSQAllocs(t *testing.T) {
	_, s, _, sqBuf, _ := newQP(t, rcInit, 8, 4)
	data := []byte("0123456789abcdef")
	wr := &provider.SendWR{Opcode: abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, Flags: abi.IB_SEND_SIGNALED, Imm: 9,
		SGE: []provider.SGE{{Addr: addr(data), Length: 16, LKey: 1}}, RemoteAddr: 0x1000, RKey: 2}
	inl := &provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_INLINE,
		SGE: []provider.SGE{{Addr: addr(data), Length: 16}}}
	var sqi provider.SQ = s
	allocs := testing.AllocsPerRun(100, func() {
		if sqi.Put(wr) != nil || sqi.Put(inl) != nil || sqi.Flush() != nil {
			panic("Put/Flush failed")
		}
		setConsumer(sqBuf, producer(sqBuf)) // the kernel keeps up
	})
	runtime.KeepAlive(data)
	if allocs != 0 {
		t.Errorf("Put+Flush allocates %v times per run", allocs)
	}
}

// The SQ is idle once the kernel's consumer index reaches the last
// published slot; Puts not yet flushed do not count, since the kernel has
// not been handed them.
func TestSQIdle(t *testing.T) {
	_, s, _, sqBuf, _ := newQP(t, rcInit, 8, 4)
	steps := []struct {
		what string
		do   func() error
		want bool
	}{
		{"new", func() error { return nil }, true},
		{"Put", func() error { return s.Put(&provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND}) }, true},
		{"Flush", s.Flush, false},
		{"kernel takes it", func() error { setConsumer(sqBuf, 1); return nil }, true},
		{"two more", func() error {
			wr := provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND}
			return errors.Join(s.Put(&wr), s.Put(&wr), s.Flush())
		}, false},
		{"kernel takes one", func() error { setConsumer(sqBuf, 2); return nil }, false},
		{"and the other", func() error { setConsumer(sqBuf, 3); return nil }, true},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.what, err)
		}
		if got := s.Idle(); got != st.want {
			t.Errorf("%s: Idle() = %v, want %v", st.what, got, st.want)
		}
	}
}

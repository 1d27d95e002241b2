package siw

import (
	"bytes"
	"errors"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

func TestSQPut(t *testing.T) {
	sges := []provider.SGE{{Addr: 0x1000, Length: 10, LKey: 0x11}, {Addr: 0x2000, Length: 20, LKey: 0x22}}
	// The SGE entries past num_sge keep the element's previous bytes
	// (0xee here), as under libsiw's push_send_wqe: the kernel copies
	// num_sge entries.
	sge := func(s ...provider.SGE) (out [abi.SIW_MAX_SGE]abi.SiwSGE) {
		for i := range out {
			out[i] = abi.SiwSGE{LAddr: 0xeeeeeeeeeeeeeeee, Length: 0xeeeeeeee, LKey: 0xeeeeeeee}
		}
		for i, s := range s {
			out[i] = abi.SiwSGE{LAddr: s.Addr, Length: s.Length, LKey: s.LKey}
		}
		return out
	}
	for _, c := range []struct {
		name string
		wr   provider.SendWR
		want abi.SiwSQE
	}{
		{
			name: "RDMA_WRITE",
			wr:   provider.SendWR{ID: 1, Opcode: abi.IB_UVERBS_WR_RDMA_WRITE, Flags: abi.IB_SEND_SIGNALED, SGE: sges, RemoteAddr: 0xabc0, RKey: 0x99, Imm: 5},
			want: abi.SiwSQE{ID: 1, Flags: abi.SIW_WQE_VALID | abi.SIW_WQE_SIGNALLED, NumSGE: 2, Opcode: abi.SIW_OP_WRITE, RKey: 0x99, RAddr: 0xabc0, SGE: sge(sges...)},
		},
		{
			name: "RDMA_READ",
			wr:   provider.SendWR{ID: 2, Opcode: abi.IB_UVERBS_WR_RDMA_READ, SGE: sges[:1], RemoteAddr: 0xdef0, RKey: 0x98},
			want: abi.SiwSQE{ID: 2, Flags: abi.SIW_WQE_VALID, NumSGE: 1, Opcode: abi.SIW_OP_READ, RKey: 0x98, RAddr: 0xdef0, SGE: sge(sges[0])},
		},
		{
			name: "SEND",
			wr:   provider.SendWR{ID: 3, Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_SOLICITED | abi.IB_SEND_FENCE, SGE: sges, RemoteAddr: 0x1, RKey: 0x2},
			want: abi.SiwSQE{ID: 3, Flags: abi.SIW_WQE_VALID | abi.SIW_WQE_SOLICITED | abi.SIW_WQE_READ_FENCE, NumSGE: 2, Opcode: abi.SIW_OP_SEND, SGE: sge(sges...)},
		},
		{
			name: "SEND no SGE",
			wr:   provider.SendWR{ID: 4, Opcode: abi.IB_UVERBS_WR_SEND},
			want: abi.SiwSQE{ID: 4, Flags: abi.SIW_WQE_VALID, Opcode: abi.SIW_OP_SEND, SGE: sge()},
		},
		{
			name: "SEND_WITH_INV",
			wr:   provider.SendWR{ID: 5, Opcode: abi.IB_UVERBS_WR_SEND_WITH_INV, Flags: abi.IB_SEND_SIGNALED, Imm: 0x1234, RKey: 0x77, SGE: sges[1:]},
			want: abi.SiwSQE{ID: 5, Flags: abi.SIW_WQE_VALID | abi.SIW_WQE_SIGNALLED, NumSGE: 1, Opcode: abi.SIW_OP_SEND_REMOTE_INV, RKey: 0x1234, SGE: sge(sges[1])},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, sq, _ := newQP(t, 4, 4)
			for i := range sqeSize {
				sq.buf[i] = 0xee // a previous request's bytes
			}
			sq.buf[flagsWord] = 0 // free
			if err := sq.Put(&c.wr); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, sq.sqe(0)); diff != "" {
				t.Errorf("SQE (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSQInline(t *testing.T) {
	a := []byte("hello, ")
	b := bytes.Repeat([]byte("w"), 73) // 80 bytes in all
	for _, op := range []uint32{abi.IB_UVERBS_WR_SEND, abi.IB_UVERBS_WR_RDMA_WRITE} {
		_, sq, _ := newQP(t, 4, 4)
		wr := provider.SendWR{ID: 7, Opcode: op, Flags: abi.IB_SEND_INLINE, RKey: 1, RemoteAddr: 2, SGE: []provider.SGE{
			{Addr: addr(a), Length: uint32(len(a)), LKey: 0xdead},
			{Addr: 0, Length: 0}, // skipped
			{Addr: addr(b), Length: uint32(len(b))},
		}}
		if err := sq.Put(&wr); err != nil {
			t.Fatal(err)
		}
		runtime.KeepAlive(a)
		runtime.KeepAlive(b)
		got := sq.sqe(0)
		// num_sge counts the three pieces, empty one included, as
		// rdma-core writes it; the kernel ignores it for inline data.
		if got.Flags != abi.SIW_WQE_VALID|abi.SIW_WQE_INLINE || got.NumSGE != 3 {
			t.Errorf("flags %#x num_sge %d", got.Flags, got.NumSGE)
		}
		if got.SGE[0] != (abi.SiwSGE{Length: 80}) {
			t.Errorf("sge[0] = %+v, want length 80 only", got.SGE[0])
		}
		if data := sq.buf[sqeInline : sqeInline+80]; string(data) != string(a)+string(b) {
			t.Errorf("inline data %q", data)
		}
	}

	_, sq, _ := newQP(t, 4, 4)
	long := make([]byte, 81)
	wr := provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_INLINE, SGE: []provider.SGE{{Addr: addr(long), Length: 81}}}
	if err := sq.Put(&wr); !errors.Is(err, provider.ErrInvalid) {
		t.Errorf("81 inline bytes: err = %v", err)
	}
	wr = provider.SendWR{Opcode: abi.IB_UVERBS_WR_RDMA_READ, Flags: abi.IB_SEND_INLINE, SGE: []provider.SGE{{Addr: addr(long), Length: 1}}}
	wantUnsupported(t, sq.Put(&wr))
	runtime.KeepAlive(long)
	if sq.put != 0 || sq.sqe(0).Flags != 0 {
		t.Errorf("failed Puts used the slot")
	}
}

func TestSQRefused(t *testing.T) {
	for _, c := range []struct {
		name        string
		wr          provider.SendWR
		unsupported bool
	}{
		{"RDMA_WRITE_WITH_IMM", provider.SendWR{Opcode: abi.IB_UVERBS_WR_RDMA_WRITE_WITH_IMM}, true},
		{"SEND_WITH_IMM", provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND_WITH_IMM}, true},
		{"ATOMIC_CMP_AND_SWP", provider.SendWR{Opcode: abi.IB_UVERBS_WR_ATOMIC_CMP_AND_SWP}, true},
		{"ATOMIC_FETCH_AND_ADD", provider.SendWR{Opcode: abi.IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD}, true},
		{"LOCAL_INV", provider.SendWR{Opcode: abi.IB_UVERBS_WR_LOCAL_INV}, true},
		{"BIND_MW", provider.SendWR{Opcode: abi.IB_UVERBS_WR_BIND_MW}, true},
		{"TSO", provider.SendWR{Opcode: abi.IB_UVERBS_WR_TSO}, true},
		{"RDMA_READ_WITH_INV", provider.SendWR{Opcode: abi.IB_UVERBS_WR_RDMA_READ_WITH_INV}, true},
		{"MASKED_ATOMIC_CMP_AND_SWP", provider.SendWR{Opcode: abi.IB_UVERBS_WR_MASKED_ATOMIC_CMP_AND_SWP}, true},
		// siw has neither RDMA FLUSH nor ATOMIC WRITE (Linux 6.12).
		{"FLUSH", provider.SendWR{Opcode: abi.IB_UVERBS_WR_FLUSH, FlushType: abi.IB_FLUSH_GLOBAL}, true},
		{"ATOMIC_WRITE", provider.SendWR{Opcode: abi.IB_UVERBS_WR_ATOMIC_WRITE, RemoteAddr: 8}, true},
		{"fenced READ", provider.SendWR{Opcode: abi.IB_UVERBS_WR_RDMA_READ, Flags: abi.IB_SEND_FENCE, SGE: make([]provider.SGE, 1)}, true},
		{"READ with 2 SGEs", provider.SendWR{Opcode: abi.IB_UVERBS_WR_RDMA_READ, SGE: make([]provider.SGE, 2)}, true},
		{"READ with no SGE", provider.SendWR{Opcode: abi.IB_UVERBS_WR_RDMA_READ}, true},
		{"SEND with 5 SGEs", provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, SGE: make([]provider.SGE, 5)}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dev, sq, _ := newQP(t, 4, 4)
			err := sq.Put(&c.wr)
			if c.unsupported {
				wantUnsupported(t, err)
			} else if !errors.Is(err, provider.ErrInvalid) {
				t.Errorf("err = %v, want provider.ErrInvalid", err)
			}
			if sq.put != 0 || sq.pending != 0 || sq.sqe(0).Flags != 0 {
				t.Errorf("a refused Put used the slot")
			}
			if err := sq.Flush(); err != nil || dev.doorbells != 0 {
				t.Errorf("Flush after a refused Put: %v, %d doorbells", err, dev.doorbells)
			}
		})
	}
}

func TestSQFullAndWrap(t *testing.T) {
	_, sq, _ := newQP(t, 4, 4)
	send := func(id uint64) error {
		return sq.Put(&provider.SendWR{ID: id, Opcode: abi.IB_UVERBS_WR_SEND})
	}
	for i := range 4 {
		if err := send(uint64(i)); err != nil {
			t.Fatalf("Put %d: %v", i, err)
		}
	}
	if err := send(4); err != provider.ErrFull {
		t.Fatalf("Put on a full SQ = %v, want ErrFull", err)
	}
	sq.consume(0)
	if err := send(4); err != nil {
		t.Fatalf("Put after the kernel took slot 0: %v", err)
	}
	if got := sq.sqe(0).ID; got != 4 {
		t.Errorf("slot 0 holds %d, want the wrapped Put 4", got)
	}
	if err := send(5); err != provider.ErrFull {
		t.Fatalf("Put = %v, want ErrFull", err)
	}
	if sq.put != 1 {
		t.Errorf("producer at %d, want 1", sq.put)
	}
}

func TestSQDoorbell(t *testing.T) {
	dev, sq, _ := newQP(t, 8, 4)
	put := func(n int) {
		t.Helper()
		for range n {
			if err := sq.Put(&provider.SendWR{Opcode: abi.IB_UVERBS_WR_RDMA_WRITE}); err != nil {
				t.Fatal(err)
			}
		}
	}
	flush := func(wantBells int) {
		t.Helper()
		if err := sq.Flush(); err != nil {
			t.Fatal(err)
		}
		if dev.doorbells != wantBells {
			t.Fatalf("%d doorbells, want %d", dev.doorbells, wantBells)
		}
	}

	flush(0) // nothing put
	put(3)   // slots 0-2; slot 7 before them is free: the kernel may be idle
	flush(1)
	if dev.handle != testHandle {
		t.Errorf("doorbell for QP %d, want %d", dev.handle, testHandle)
	}
	flush(1) // nothing new

	put(1) // slot 3; slot 2 is still valid: the kernel has work ahead of it
	flush(1)

	for i := range 4 {
		sq.consume(i)
	}
	put(2) // slots 4, 5; slot 3 taken
	flush(2)

	// A batch that goes round the whole ring always rings.
	for i := 4; i < 6; i++ {
		sq.consume(i)
	}
	for range 7 {
		put(1)
		sq.consume(int(sq.put+7) % 8)
	}
	put(1) // slot 5, before the batch's first (6), stays valid
	flush(3)

	// A failed doorbell makes the next Flush ring whatever the ring says.
	sq.consume(5)
	put(1) // slot 6
	dev.bellErr = errors.New("ENOTCONN")
	if err := sq.Flush(); err == nil || dev.doorbells != 4 {
		t.Fatalf("Flush = %v with %d doorbells", err, dev.doorbells)
	}
	dev.bellErr = nil
	put(1) // slot 7: slot 6 before it is valid, never taken
	flush(5)
	put(1) // back to the heuristic
	flush(5)
}

func TestSQNoAllocs(t *testing.T) {
	dev, sq, _ := newQP(t, 16, 4)
	data := []byte("0123456789")
	wr := provider.SendWR{ID: 1, Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_SIGNALED, SGE: []provider.SGE{{Addr: 1, Length: 2, LKey: 3}}}
	inl := provider.SendWR{ID: 2, Opcode: abi.IB_UVERBS_WR_RDMA_WRITE, Flags: abi.IB_SEND_INLINE, SGE: []provider.SGE{{Addr: addr(data), Length: 10}}}
	var q provider.SQ = sq
	allocs := testing.AllocsPerRun(100, func() {
		slot := int(sq.put)
		if q.Put(&wr) != nil || q.Put(&inl) != nil || q.Flush() != nil {
			panic("Put or Flush failed")
		}
		sq.consume(slot)
		sq.consume((slot + 1) % 16)
	})
	runtime.KeepAlive(data)
	if allocs != 0 {
		t.Errorf("%v allocations per Put+Put+Flush", allocs)
	}
	if dev.doorbells != 101 {
		t.Errorf("%d doorbells", dev.doorbells)
	}
}

// The SQ is idle once the kernel has cleared the valid flag of the last
// element Put, including across the ring's wrap.
func TestSQIdle(t *testing.T) {
	_, sq, _ := newQP(t, 2, 2)
	send := func() error {
		return errors.Join(sq.Put(&provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND}), sq.Flush())
	}
	steps := []struct {
		what string
		do   func() error
		want bool
	}{
		{"new", func() error { return nil }, true},
		{"send into slot 0", send, false},
		{"kernel takes slot 0", func() error { sq.consume(0); return nil }, true},
		{"send into slot 1", send, false},
		{"kernel takes slot 1", func() error { sq.consume(1); return nil }, true},
		{"send into slot 0 again", send, false},
		{"kernel takes it", func() error { sq.consume(0); return nil }, true},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.what, err)
		}
		if got := sq.Idle(); got != st.want {
			t.Errorf("%s: Idle() = %v, want %v", st.what, got, st.want)
		}
	}
}

// TestSendFlags checks the flag table against libsiw's map_send_flags,
// every combination of the bits it maps.
func TestSendFlags(t *testing.T) {
	const v, sig, sol, fence = abi.SIW_WQE_VALID, abi.SIW_WQE_SIGNALLED, abi.SIW_WQE_SOLICITED, abi.SIW_WQE_READ_FENCE
	want := [8]uint32{
		0:                                        v,
		abi.IB_SEND_FENCE:                        v | fence,
		abi.IB_SEND_SIGNALED:                     v | sig,
		abi.IB_SEND_SIGNALED | abi.IB_SEND_FENCE: v | sig | fence,
		abi.IB_SEND_SOLICITED:                    v | sol,
		abi.IB_SEND_SOLICITED | abi.IB_SEND_FENCE:                        v | sol | fence,
		abi.IB_SEND_SOLICITED | abi.IB_SEND_SIGNALED:                     v | sol | sig,
		abi.IB_SEND_SOLICITED | abi.IB_SEND_SIGNALED | abi.IB_SEND_FENCE: v | sol | sig | fence,
	}
	if sendFlags != want {
		t.Errorf("sendFlags = %#x, want %#x", sendFlags, want)
	}
}

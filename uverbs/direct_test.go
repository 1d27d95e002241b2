package uverbs

import (
	"bytes"
	"testing"
	"unsafe"
)

// TestPostDirect: the drivers of this module read the caller's request
// itself (sendView, recvView); the queue's bytes must be those the copy
// through the QP's scratch request leaves, for every field a request of
// each kind carries.
func TestPostDirect(t *testing.T) {
	addr := uint64(uintptr(unsafe.Pointer(&inlineData[0])))
	sges := []SGE{{Addr: 0x10000, Length: 4096, LKey: 0x55}, {Addr: 0x20000, Length: 16, LKey: 0x66}}
	sends := []SendWR{
		{ID: 1, Opcode: WRRDMAWrite, Flags: SendSignaled, SGE: sges[:1], RemoteAddr: 0xdead0000, RKey: 0x77},
		{ID: 2, Opcode: WRRDMAWriteWithImm, Flags: SendSolicited, SGE: sges, RemoteAddr: 0xbeef0000, RKey: 0x78, Imm: 0x01020304},
		{ID: 3, Opcode: WRSendWithImm, Flags: SendSignaled | SendFence, SGE: sges, Imm: 0xa0b0c0d0},
		{ID: 4, Opcode: WRSend, Flags: SendInline | SendSignaled, SGE: []SGE{{Addr: addr, Length: 48}}},
		{ID: 5, Opcode: WRRDMARead, Flags: SendSignaled, SGE: sges[:1], RemoteAddr: 0x1000, RKey: 0x79},
		{ID: 6, Opcode: WRAtomicFetchAndAdd, Flags: SendSignaled, SGE: []SGE{{Addr: 0x30000, Length: 8, LKey: 0x67}},
			RemoteAddr: 0x2000, RKey: 0x7a, CompareAdd: 0x1122334455667788},
		{ID: 7, Opcode: WRAtomicCmpAndSwp, SGE: []SGE{{Addr: 0x30008, Length: 8, LKey: 0x67}},
			RemoteAddr: 0x2008, RKey: 0x7b, CompareAdd: 5, Swap: 6},
		{ID: 8, Opcode: WRSendWithInv, SGE: sges[:1], Imm: 0x1234},
		{ID: 9, Opcode: WRLocalInv, Imm: 0x4321},
	}
	recvs := []RecvWR{{ID: 10, SGE: sges}, {ID: 11, SGE: sges[:1]}, {ID: 12}}
	// siw has no immediate data, atomics or invalidation.
	siwSends := []SendWR{sends[0], sends[3], sends[4]}
	for _, q := range []struct {
		name  string
		mk    hostQPFunc
		sends []SendWR
	}{{"rxe", hostQP, sends}, {"siw", hostQPSiw, siwSends}} {
		t.Run(q.name, func(t *testing.T) {
			sends := q.sends
			direct, ddev, _, _ := q.mk(t)
			copied, cdev, _, _ := q.mk(t)
			if n, err := direct.PostSend(sends); n != len(sends) || err != nil {
				t.Fatalf("PostSend = %d, %v", n, err)
			}
			for i := range sends {
				if err := copied.sq.Put(copied.copySend(&sends[i])); err != nil {
					t.Fatalf("copy of request %d: %v", i, err)
				}
			}
			if err := copied.sq.Flush(); err != nil {
				t.Fatal(err)
			}
			if n, err := direct.PostRecv(recvs); n != len(recvs) || err != nil {
				t.Fatalf("PostRecv = %d, %v", n, err)
			}
			if n, err := copied.recv.post(recvs); n != len(recvs) || err != nil {
				t.Fatalf("postRecv = %d, %v", n, err)
			}
			for off, name := range map[uint64]string{1 << 12: "receive queue", 2 << 12: "send queue"} {
				if d, c := ddev.Maps[off], cdev.Maps[off]; !bytes.Equal(d, c) {
					t.Errorf("%s differs from the copy's at byte %d", name, firstDiff(d, c))
				}
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestPostStackAllocs: requests and gather lists on the caller's stack
// stay there; an interface call to the driver with the caller's request
// would make them escape.
func TestPostStackAllocs(t *testing.T) {
	// 101 posts each way: mlx5's queues of 1024 need no restart.
	for _, q := range hostQPs {
		t.Run(q.name, func(t *testing.T) {
			qp, _, takeSQ, takeRQ := q.mk(t)
			got := testing.AllocsPerRun(100, func() {
				sge := [1]SGE{{Addr: 0x10000, Length: 64, LKey: 0x55}}
				send := [1]SendWR{{ID: 1, Opcode: WRRDMAWrite, Flags: SendSignaled, SGE: sge[:], RemoteAddr: 0x1000, RKey: 2}}
				recv := [1]RecvWR{{ID: 2, SGE: sge[:]}}
				if n, err := qp.PostSend(send[:]); n != 1 || err != nil {
					t.Fatal(n, err)
				}
				if n, err := qp.PostRecv(recv[:]); n != 1 || err != nil {
					t.Fatal(n, err)
				}
				takeSQ()
				takeRQ()
			})
			if got != 0 {
				t.Fatalf("%v allocations per post from the stack", got)
			}
		})
	}
}

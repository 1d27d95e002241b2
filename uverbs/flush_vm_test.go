package uverbs_test

import (
	"errors"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// flushOnly is why the RDMA FLUSH and ATOMIC WRITE tests run on rxe alone:
// it is the one driver that has them (Linux 6.2+), and what they check of
// the responder is rxe's.
const flushOnly = "RDMA FLUSH and ATOMIC WRITE are rxe's alone (Linux 6.2+), and the responder checks are rxe's"

// TestAtomicWrite writes 8 bytes with RDMA ATOMIC WRITE (rxe, Linux 6.2+)
// and checks the completion (opcode 9, IBV_WC_ATOMIC_WRITE) and the
// responder's memory.
func TestAtomicWrite(t *testing.T) {
	d := testenv.Only(t, "rxe", flushOnly)
	r, a, _ := rcPair(t, d)
	attr, err := r.ctx.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	testenv.NeedKernelFeature(t, d, attr.AtomicWrite(), "RDMA ATOMIC WRITE", "6.2")
	const off = 2048 // 8-byte aligned
	copy(r.buf[off:], "old old!")
	_, err = a.PostSend([]uverbs.SendWR{{ID: 1, Opcode: uverbs.WRAtomicWrite, Flags: uverbs.SendSignaled,
		RemoteAddr: r.mr.Addr() + off, RKey: r.mr.RKey(), AtomicData: [8]byte{'a', 't', 'o', 'm', 'i', 'c', '!', '!'}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []cq.WC{{ID: 1, Opcode: cq.OpAtomicWrite, ByteLen: 8, QPNum: a.Num()}}
	if diff := cmp.Diff(want, r.poll(t, 1)); diff != "" {
		t.Errorf("completion (-want +got):\n%s", diff)
	}
	if got := string(r.buf[off : off+8]); got != "atomic!!" {
		t.Errorf("responder memory %q, want %q", got, "atomic!!")
	}
}

// flushQPAccess is what rdma_cm gives an RC QP on a device with flush
// (Linux 6.2's "RDMA/cm: Make QP FLUSHABLE for supported device").
const flushQPAccess = rigAccess | uverbs.AccessFlushGlobal | uverbs.AccessFlushPersistent

// TestFlush writes and then flushes with RDMA FLUSH (rxe, Linux 6.2+):
// the completion has opcode 8 (IBV_WC_FLUSH) when both the responder's
// QP and region admit the flush type, and rxe's responder refuses it
// otherwise: a region without the type's FLUSH access is a remote access
// error (its check_rkey), a QP without it an invalid request (its
// check_qp_attr_access).
func TestFlush(t *testing.T) {
	d := testenv.Only(t, "rxe", flushOnly)
	tests := []struct {
		name     string
		qpAccess uverbs.Access // the responder's
		mrAccess uverbs.Access
		typ      uverbs.FlushType
		level    uverbs.FlushLevel
		length   uint32
		want     cq.WC // ID 2, QPNum filled in below
	}{
		{"global, range", flushQPAccess, uverbs.LocalWrite | uverbs.RemoteWrite | uverbs.AccessFlushGlobal, uverbs.FlushGlobal, uverbs.FlushRange, 16,
			cq.WC{Opcode: cq.OpFlush, ByteLen: 16}},
		{"global, whole region", flushQPAccess, uverbs.LocalWrite | uverbs.RemoteWrite | uverbs.AccessFlushGlobal, uverbs.FlushGlobal, uverbs.FlushMR, 0,
			cq.WC{Opcode: cq.OpFlush}},
		{"region without FLUSH access", flushQPAccess, uverbs.LocalWrite | uverbs.RemoteWrite | uverbs.RemoteRead, uverbs.FlushGlobal, uverbs.FlushRange, 16,
			cq.WC{Status: cq.RemAccessErr}},
		{"persistent to a region with global only", flushQPAccess, uverbs.LocalWrite | uverbs.RemoteWrite | uverbs.AccessFlushGlobal, uverbs.FlushPersistent, uverbs.FlushRange, 16,
			cq.WC{Status: cq.RemAccessErr}},
		{"QP without FLUSH access", rigAccess, uverbs.LocalWrite | uverbs.RemoteWrite | uverbs.AccessFlushGlobal, uverbs.FlushGlobal, uverbs.FlushRange, 16,
			cq.WC{Status: cq.RemInvReqErr}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, d)
			attr, err := r.ctx.QueryDevice()
			if err != nil {
				t.Fatal(err)
			}
			testenv.NeedKernelFeature(t, d, attr.FlushTypes() == uverbs.FlushGlobal|uverbs.FlushPersistent, "RDMA FLUSH", "6.2")
			buf, err := mr.Alloc(4096)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { mr.Free(buf) })
			dst, err := mr.Register(r.pd, buf, tt.mrAccess)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { dst.Close() })
			a, b := r.qp(t, uverbs.RC, nil), r.qp(t, uverbs.RC, nil)
			r.connectAccess(t, a, b.Num(), rigAccess)
			r.connectAccess(t, b, a.Num(), tt.qpAccess)

			copy(r.buf, "flushed at last!")
			wrs := []uverbs.SendWR{{ID: 1, Opcode: uverbs.WRRDMAWrite, SGE: []uverbs.SGE{r.sge(0, 16)},
				RemoteAddr: dst.Addr() + 64, RKey: dst.RKey()}}
			if tt.want.Status != cq.Success {
				wrs = wrs[:0] // the write would succeed; only the flush fails
			}
			wrs = append(wrs, uverbs.SendWR{ID: 2, Opcode: uverbs.WRFlush, Flags: uverbs.SendSignaled,
				RemoteAddr: dst.Addr() + 64, RKey: dst.RKey(), Length: tt.length, FlushType: tt.typ, FlushLevel: tt.level})
			if n, err := a.PostSend(wrs); err != nil || n != len(wrs) {
				t.Fatalf("PostSend = %d, %v", n, err)
			}
			want := tt.want
			want.ID, want.QPNum = 2, a.Num()
			if diff := cmp.Diff([]cq.WC{want}, r.poll(t, 1)); diff != "" {
				t.Errorf("completion (-want +got):\n%s", diff)
			}
			if want.Status == cq.Success {
				if got := string(buf[64:80]); got != "flushed at last!" {
					t.Errorf("responder memory %q", got)
				}
			}
		})
	}
}

// TestFlushPersistentAccessNeedsPMem: rxe grants FLUSH_PERSISTENT access
// only to persistent memory (rxe_mr.c, "Page can't be persistent"), so
// registering ordinary memory with it fails with EINVAL.
func TestFlushPersistentAccessNeedsPMem(t *testing.T) {
	d := testenv.Only(t, "rxe", flushOnly)
	r := newRig(t, d)
	attr, err := r.ctx.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	testenv.NeedKernelFeature(t, d, attr.FlushTypes()&uverbs.FlushPersistent != 0, "RDMA FLUSH", "6.2")
	m, err := mr.Register(r.pd, r.buf, uverbs.LocalWrite|uverbs.RemoteWrite|uverbs.AccessFlushPersistent)
	if err == nil {
		m.Close()
		t.Fatal("registered ordinary memory with FLUSH_PERSISTENT access")
	}
	if !errors.Is(err, syscall.EINVAL) {
		t.Errorf("error %v, want EINVAL", err)
	}
}

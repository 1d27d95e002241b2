package rxe

import (
	"encoding/binary"
	"errors"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

func newCQ(t *testing.T, slots uint32) (*fakeDev, *cq, []byte) {
	t.Helper()
	buf := ring(7, slots, 0, 0)
	dev := &fakeDev{maps: map[uint64][]byte{4096: buf}}
	c, err := createCQ(dev, resp(t, abi.RxeCreateCQResp{MI: mi(4096, buf)}))
	if err != nil {
		t.Fatal(err)
	}
	return dev, c.(*cq), buf
}

// putWC writes a completion the way the kernel does: imm_data as the
// packet's big-endian bytes.
func putWC(t *testing.T, buf []byte, i int, wc abi.WC, imm uint32) {
	t.Helper()
	b := resp(t, wc)
	if wc.WCFlags&abi.IB_WC_WITH_IMM != 0 {
		binary.BigEndian.PutUint32(b[24:], imm) // ib_uverbs_wc.ex
	}
	copy(slotOf(buf, i), b)
}

func TestCQNext(t *testing.T) {
	_, c, buf := newCQ(t, 4)
	var wc provider.WC
	if next(c, &wc) {
		t.Fatal("Next on an empty CQ reported a completion")
	}
	putWC(t, buf, 0, abi.WC{WrID: 1, Opcode: abi.IB_WC_RECV, ByteLen: 10, QPNum: 0x11, SrcQP: 0x22,
		WCFlags: abi.IB_WC_GRH | abi.IB_WC_WITH_IMM, PKeyIndex: 1, SLID: 2, SL: 3, DLIDPathBits: 4, PortNum: 1}, 0x01020304)
	putWC(t, buf, 1, abi.WC{WrID: 2, Opcode: abi.IB_WC_RECV, WCFlags: abi.IB_WC_WITH_INVALIDATE, Ex: 0xabcdef}, 0)
	putWC(t, buf, 2, abi.WC{WrID: 3, Status: abi.IB_WC_WR_FLUSH_ERR, VendorErr: 7}, 0)
	setProducer(buf, 3)
	want := []provider.WC{
		{ID: 1, Opcode: abi.IB_WC_RECV, ByteLen: 10, ImmData: 0x01020304, QPNum: 0x11, SrcQP: 0x22,
			Flags: abi.IB_WC_GRH | abi.IB_WC_WITH_IMM, PKeyIndex: 1, SLID: 2, SL: 3, DLIDPathBits: 4, PortNum: 1},
		{ID: 2, Opcode: abi.IB_WC_RECV, Flags: abi.IB_WC_WITH_INVALIDATE, ImmData: 0xabcdef},
		{ID: 3, Status: abi.IB_WC_WR_FLUSH_ERR, VendorErr: 7},
	}
	for i, w := range want {
		if !next(c, &wc) {
			t.Fatalf("Next %d: no completion", i)
		}
		if diff := cmp.Diff(w, wc); diff != "" {
			t.Errorf("completion %d (-want +got):\n%s", i, diff)
		}
		if got := consumer(buf); got != uint32(i+1) {
			t.Errorf("consumer after %d = %d", i, got)
		}
	}
	if next(c, &wc) {
		t.Fatal("Next reported a completion past the producer")
	}
	// Wrap: the kernel fills slots 3 and 0.
	putWC(t, buf, 3, abi.WC{WrID: 4}, 0)
	putWC(t, buf, 0, abi.WC{WrID: 5}, 0)
	setProducer(buf, 1)
	for _, id := range []uint64{4, 5} {
		if !next(c, &wc) || wc.ID != id {
			t.Fatalf("after wrap: got %v (%d), want %d", wc, wc.ID, id)
		}
	}
	if got := consumer(buf); got != 1 || next(c, &wc) {
		t.Errorf("after wrap: consumer = %d, want 1 and empty", got)
	}
}

func TestCQArmAndClose(t *testing.T) {
	dev, c, buf := newCQ(t, 4)
	if c.Arm(false) || c.Arm(true) {
		t.Error("Arm = true, want false (rxe arms with REQ_NOTIFY_CQ)")
	}
	setProducer(buf, 1)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil || dev.unmapped != 1 {
		t.Errorf("second Close = %v, %d munmaps; want nil, 1", err, dev.unmapped)
	}
	var wc provider.WC
	if next(c, &wc) {
		t.Error("Next on a closed CQ reported a completion")
	}
}

func TestCQAllocs(t *testing.T) {
	_, c, buf := newCQ(t, 4)
	var cqi provider.CQ = c
	var wc provider.WC
	putWC(t, buf, 0, abi.WC{WrID: 1, WCFlags: abi.IB_WC_WITH_IMM}, 5)
	allocs := testing.AllocsPerRun(100, func() {
		setProducer(buf, (consumer(buf)+1)&3) // one new completion
		if !next(cqi, &wc) || next(cqi, &wc) {
			panic("Next")
		}
	})
	if allocs != 0 {
		t.Errorf("Next allocates %v times per run", allocs)
	}
}

// TestCQTakeRelease: Take copies what Poll would but keeps the slots from
// the kernel until Release, which stores the consumer index once; a Poll
// after Takes hands their slots back too.
func TestCQTakeRelease(t *testing.T) {
	_, c, buf := newCQ(t, 4)
	var wc provider.WC
	if c.Take(&wc) {
		t.Fatal("Take on an empty CQ reported a completion")
	}
	c.Release()
	if got := consumer(buf); got != 0 {
		t.Fatalf("consumer after Release of nothing = %d, want 0", got)
	}
	putWC(t, buf, 0, abi.WC{WrID: 1, Opcode: abi.IB_WC_RECV, WCFlags: abi.IB_WC_WITH_IMM, ByteLen: 3}, 0x01020304)
	putWC(t, buf, 1, abi.WC{WrID: 2, Opcode: abi.IB_WC_RDMA_WRITE}, 0)
	putWC(t, buf, 2, abi.WC{WrID: 3, Status: abi.IB_WC_WR_FLUSH_ERR, VendorErr: 7}, 0)
	setProducer(buf, 3)
	if !c.Take(&wc) {
		t.Fatal("Take 1: no completion")
	}
	if diff := cmp.Diff(provider.WC{ID: 1, Opcode: abi.IB_WC_RECV, Flags: abi.IB_WC_WITH_IMM, ByteLen: 3, ImmData: 0x01020304}, wc); diff != "" {
		t.Errorf("Take 1 (-want +got):\n%s", diff)
	}
	if !c.Take(&wc) || wc.ID != 2 {
		t.Fatalf("Take 2: got %+v", wc)
	}
	if got := consumer(buf); got != 0 {
		t.Errorf("consumer before Release = %d, want 0 (the slots are kept)", got)
	}
	c.Release()
	if got := consumer(buf); got != 2 {
		t.Errorf("consumer after Release = %d, want 2", got)
	}
	// A Take kept, then a Poll that finds nothing more still hands it back.
	if !c.Take(&wc) || wc.ID != 3 || wc.Status != abi.IB_WC_WR_FLUSH_ERR {
		t.Fatalf("Take 3: got %+v", wc)
	}
	if n := c.Poll(make([]provider.WC, 2)); n != 0 {
		t.Fatalf("Poll after the last Take = %d, want 0", n)
	}
	if got := consumer(buf); got != 3 {
		t.Errorf("consumer after Poll = %d, want 3", got)
	}
	// Released on a closed CQ: no store into the unmapped ring.
	putWC(t, buf, 3, abi.WC{WrID: 4}, 0)
	setProducer(buf, 0)
	if !c.Take(&wc) || wc.ID != 4 {
		t.Fatalf("Take 4: got %+v", wc)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c.Release()
	if got := consumer(buf); got != 3 {
		t.Errorf("consumer after Release on a closed CQ = %d, want 3", got)
	}
}

// TestCQResize: after a resize the CQ reads the new ring from its own
// indices (where the kernel copied the completions not handed back) and
// the old ring is unmapped; a short response or a failed mmap leaves the
// old ring in use.
func TestCQResize(t *testing.T) {
	dev, c, buf := newCQ(t, 4)
	putWC(t, buf, 0, abi.WC{WrID: 1}, 0)
	putWC(t, buf, 1, abi.WC{WrID: 2}, 0)
	putWC(t, buf, 2, abi.WC{WrID: 3}, 0)
	setProducer(buf, 3)
	var wc provider.WC
	if !next(c, &wc) || wc.ID != 1 {
		t.Fatalf("first completion %+v", wc)
	}
	if err := c.Resize(make([]byte, resizeCQRespSize-1)); err == nil {
		t.Fatal("Resize with a short response succeeded")
	}
	// What rxe_queue_resize would leave now: the two unread completions
	// first in a ring of 8, producer 2, consumer 0.
	nbuf := ring(7, 8, 2, 0)
	putWC(t, nbuf, 0, abi.WC{WrID: 2}, 0)
	putWC(t, nbuf, 1, abi.WC{WrID: 3}, 0)
	dev.maps[8192] = nbuf
	dev.mmapErr = unix.ENOMEM
	if err := c.Resize(resp(t, abi.RxeResizeCQResp{MI: mi(8192, nbuf)})); !errors.Is(err, unix.ENOMEM) {
		t.Fatalf("Resize with a failing mmap = %v, want ENOMEM", err)
	}
	if dev.unmapped != 0 || !next(c, &wc) || wc.ID != 2 {
		t.Fatalf("after the failed resize: %d unmapped, next %+v; want the old ring", dev.unmapped, wc)
	}
	// With 2 read from the old ring, the kernel copies only 3.
	nbuf = ring(7, 8, 1, 0)
	putWC(t, nbuf, 0, abi.WC{WrID: 3}, 0)
	dev.maps[8192] = nbuf
	dev.mmapErr = nil
	if err := c.Resize(resp(t, abi.RxeResizeCQResp{MI: mi(8192, nbuf)})); err != nil {
		t.Fatal(err)
	}
	if dev.unmapped != 1 {
		t.Errorf("%d munmaps after the resize, want 1 (the old ring)", dev.unmapped)
	}
	got := make([]provider.WC, 4)
	if n := c.Poll(got); n != 1 || got[0].ID != 3 {
		t.Errorf("Poll after the resize = %d, %+v; want id 3", n, got[:n])
	}
	if consumer(nbuf) != 1 || consumer(buf) != 2 {
		t.Errorf("consumers: new ring %d, old %d; want 1, 2", consumer(nbuf), consumer(buf))
	}
	if err := c.Close(); err != nil || dev.unmapped != 2 {
		t.Errorf("Close = %v, %d munmaps; want nil, 2", err, dev.unmapped)
	}
	if err := c.Resize(resp(t, abi.RxeResizeCQResp{MI: mi(8192, nbuf)})); err == nil {
		t.Error("Resize of a closed CQ succeeded")
	}
}

// TestWCLayout pins provider.WC to the kernel's struct ib_uverbs_wc
// (abi.WC) field by field, as Poll's whole-slot copy needs: ImmData is
// the union ex, which Poll turns to host order.
func TestWCLayout(t *testing.T) {
	var k abi.WC
	var p provider.WC
	for _, c := range []struct {
		name        string
		kernel, drv uintptr
		want        uintptr
	}{
		{"wr_id", unsafe.Offsetof(k.WrID), unsafe.Offsetof(p.ID), 0},
		{"status", unsafe.Offsetof(k.Status), unsafe.Offsetof(p.Status), 8},
		{"opcode", unsafe.Offsetof(k.Opcode), unsafe.Offsetof(p.Opcode), 12},
		{"vendor_err", unsafe.Offsetof(k.VendorErr), unsafe.Offsetof(p.VendorErr), 16},
		{"byte_len", unsafe.Offsetof(k.ByteLen), unsafe.Offsetof(p.ByteLen), 20},
		{"ex", unsafe.Offsetof(k.Ex), unsafe.Offsetof(p.ImmData), 24},
		{"qp_num", unsafe.Offsetof(k.QPNum), unsafe.Offsetof(p.QPNum), 28},
		{"src_qp", unsafe.Offsetof(k.SrcQP), unsafe.Offsetof(p.SrcQP), 32},
		{"wc_flags", unsafe.Offsetof(k.WCFlags), unsafe.Offsetof(p.Flags), 36},
		{"pkey_index", unsafe.Offsetof(k.PKeyIndex), unsafe.Offsetof(p.PKeyIndex), 40},
		{"slid", unsafe.Offsetof(k.SLID), unsafe.Offsetof(p.SLID), 42},
		{"sl", unsafe.Offsetof(k.SL), unsafe.Offsetof(p.SL), 44},
		{"dlid_path_bits", unsafe.Offsetof(k.DLIDPathBits), unsafe.Offsetof(p.DLIDPathBits), 45},
		{"port_num", unsafe.Offsetof(k.PortNum), unsafe.Offsetof(p.PortNum), 46},
		{"size", unsafe.Sizeof(k), unsafe.Sizeof(p), 48},
	} {
		if c.kernel != c.want || c.drv != c.want {
			t.Errorf("%s: ib_uverbs_wc at %d, provider.WC at %d, want %d", c.name, c.kernel, c.drv, c.want)
		}
	}
}

// TestCQStartIndex checks that a CQ starts where the kernel's consumer
// index is (PollStatus keeps it as a byte offset, the index times the
// slot size), on a new ring and on a resized one, and wraps from there.
func TestCQStartIndex(t *testing.T) {
	tests := []struct {
		name       string
		log2       uint32
		cons, prod uint32
		resize     bool
		wantIDs    []uint64
		wantCons   uint32
	}{
		{"new, at 0", 6, 0, 2, false, []uint64{100, 101}, 2},
		{"new, at 2", 6, 2, 1, false, []uint64{102, 103, 100}, 1},
		{"new, at 3, slots of 128", 7, 3, 0, false, []uint64{103}, 0},
		{"resized, at 1", 6, 1, 3, true, []uint64{101, 102}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := ring(tt.log2, 4, tt.cons, tt.cons)
			dev := &fakeDev{maps: map[uint64][]byte{4096: buf}}
			pc, err := createCQ(dev, resp(t, abi.RxeCreateCQResp{MI: mi(4096, buf)}))
			if err != nil {
				t.Fatal(err)
			}
			c := pc.(*cq)
			if tt.resize {
				buf = ring(tt.log2, 4, tt.cons, tt.cons)
				dev.maps[8192] = buf
				if err := c.Resize(resp(t, abi.RxeResizeCQResp{MI: mi(8192, buf)})); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 4 {
				putWC(t, buf, i, abi.WC{WrID: 100 + uint64(i)}, 0)
			}
			setProducer(buf, tt.prod)
			got := make([]provider.WC, 4)
			n := c.Poll(got)
			var ids []uint64
			for _, wc := range got[:n] {
				ids = append(ids, wc.ID)
			}
			if diff := cmp.Diff(tt.wantIDs, ids); diff != "" {
				t.Errorf("IDs (-want +got):\n%s", diff)
			}
			if got := consumer(buf); got != tt.wantCons {
				t.Errorf("consumer = %d, want %d", got, tt.wantCons)
			}
		})
	}
}

// TestCQPollClosed checks that a poll of a closed CQ moves nothing, also
// when the last poll left completions it had seen (the producer it
// loaded is ahead of the consumer): the ring is unmapped.
func TestCQPollClosed(t *testing.T) {
	tests := []struct {
		name    string
		pending uint32 // completions the kernel put before the first poll
	}{
		{"none seen", 0},
		{"one seen, not taken", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c, buf := newCQ(t, 4)
			for i := range tt.pending {
				putWC(t, buf, int(i), abi.WC{WrID: 1 + uint64(i)}, 0)
			}
			setProducer(buf, tt.pending)
			if tt.pending > 0 {
				if n := c.Poll(make([]provider.WC, 1)); n != 1 {
					t.Fatalf("first Poll = %d, want 1", n)
				}
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if n := c.Poll(make([]provider.WC, 4)); n != 0 {
				t.Errorf("Poll of a closed CQ = %d, want 0", n)
			}
		})
	}
}

// TestCQTakeAgrees: Take, PollStatus of one without the store, has its
// own code; run over the same rings, a run of Takes and a Release must
// copy what Polls of one copy and leave the ring and the CQ where they
// leave them: the completions (imm_data in host order only with the
// flag), the consumer index, and the cached indices the next poll starts
// from. A Poll of nothing after Takes hands their slots back.
func TestCQTakeAgrees(t *testing.T) {
	wcs := []abi.WC{
		{WrID: 1, Opcode: abi.IB_WC_RECV, ByteLen: 10, WCFlags: abi.IB_WC_WITH_IMM, QPNum: 0x11, PortNum: 1},
		{WrID: 2, Opcode: abi.IB_WC_RDMA_WRITE},
		{WrID: 3, Opcode: abi.IB_WC_RECV, WCFlags: abi.IB_WC_WITH_INVALIDATE, Ex: 0x00abcdef},
		{WrID: 4, Status: abi.IB_WC_WR_FLUSH_ERR, VendorErr: 7},
		{WrID: 5, Opcode: abi.IB_WC_RECV_RDMA_WITH_IMM, WCFlags: abi.IB_WC_WITH_IMM | abi.IB_WC_GRH, SrcQP: 0x22},
	}
	for _, tc := range []struct {
		name       string
		cons, prod uint32 // before; the slots from cons up to prod hold wcs in order
		takes      int    // Takes (and Polls of one) tried, past the producer too
		poll0      bool   // then a Poll of no completions instead of Release
	}{
		{"empty", 0, 0, 2, false},
		{"one", 0, 1, 2, false},
		{"all", 0, 5, 6, false},
		{"wrap", 5, 2, 6, false},
		{"some", 6, 1, 2, false},
		{"poll0", 1, 4, 2, true},
		{"poll0-empty", 1, 3, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bufs [2][]byte
			var cqs [2]*cq
			for i := range cqs {
				bufs[i] = ring(7, 8, tc.cons, tc.cons)
				dev := &fakeDev{maps: map[uint64][]byte{4096: bufs[i]}}
				c, err := createCQ(dev, resp(t, abi.RxeCreateCQResp{MI: mi(4096, bufs[i])}))
				if err != nil {
					t.Fatal(err)
				}
				cqs[i] = c.(*cq)
				for k, s := 0, tc.cons; s != tc.prod; k, s = k+1, (s+1)&7 {
					putWC(t, bufs[i], int(s), wcs[k], 0x01020304+uint32(k))
				}
				setProducer(bufs[i], tc.prod)
			}
			took, polled := cqs[0], cqs[1]
			for k := range tc.takes {
				var a, b provider.WC
				ta, tb := took.Take(&a), next(polled, &b)
				if ta != tb {
					t.Fatalf("%d: Take = %v, Poll of one = %v", k, ta, tb)
				}
				if diff := cmp.Diff(b, a); diff != "" {
					t.Errorf("%d: Take's completion (-poll +take):\n%s", k, diff)
				}
				if took.at != polled.at || took.end != polled.end {
					t.Errorf("%d: Take left at %d, end %d; Poll at %d, end %d", k, took.at, took.end, polled.at, polled.end)
				}
			}
			if tc.poll0 {
				if n, failed := took.PollStatus(nil); n != 0 || failed {
					t.Errorf("PollStatus(nil) after Takes = %d, %v", n, failed)
				}
			} else {
				took.Release()
			}
			if took.kept {
				t.Error("slots still kept after the Takes were handed back")
			}
			if diff := cmp.Diff(bufs[1], bufs[0]); diff != "" {
				t.Errorf("rings (-poll +take):\n%s", diff)
			}
		})
	}
}

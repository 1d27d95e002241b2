package siw

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

func TestCQNext(t *testing.T) {
	for _, c := range []struct {
		name string
		cqe  abi.SiwCQE
		want provider.WC
	}{
		{"send", abi.SiwCQE{ID: 1, Opcode: abi.SIW_OP_SEND, Bytes: 100, QPID: 7},
			provider.WC{ID: 1, Status: abi.IB_WC_SUCCESS, Opcode: abi.IB_WC_SEND, ByteLen: 100, QPNum: 7}},
		{"write", abi.SiwCQE{ID: 2, Opcode: abi.SIW_OP_WRITE, Bytes: 8, QPID: 7},
			provider.WC{ID: 2, Opcode: abi.IB_WC_RDMA_WRITE, ByteLen: 8, QPNum: 7}},
		{"read", abi.SiwCQE{ID: 3, Opcode: abi.SIW_OP_READ, Bytes: 4096, QPID: 7},
			provider.WC{ID: 3, Opcode: abi.IB_WC_RDMA_READ, ByteLen: 4096, QPNum: 7}},
		{"read local inv", abi.SiwCQE{ID: 3, Opcode: abi.SIW_OP_READ_LOCAL_INV, QPID: 7},
			provider.WC{ID: 3, Opcode: abi.IB_WC_RDMA_READ, QPNum: 7}},
		{"send with inv", abi.SiwCQE{ID: 4, Opcode: abi.SIW_OP_SEND_REMOTE_INV, QPID: 7},
			provider.WC{ID: 4, Opcode: abi.IB_WC_SEND, QPNum: 7}},
		{"send with imm has no imm", abi.SiwCQE{ID: 5, Opcode: abi.SIW_OP_SEND_WITH_IMM, ImmData: 0x55, QPID: 7},
			provider.WC{ID: 5, Opcode: abi.IB_WC_SEND, QPNum: 7}},
		{"recv", abi.SiwCQE{ID: 6, Opcode: abi.SIW_OP_RECEIVE, Bytes: 33, QPID: 1 << 20},
			provider.WC{ID: 6, Opcode: abi.IB_WC_RECV, ByteLen: 33, QPNum: 1 << 20}},
		{"recv with inv", abi.SiwCQE{ID: 7, Flags: abi.SIW_WQE_REM_INVAL, Opcode: abi.SIW_OP_RECEIVE, ImmData: 0xabcd, QPID: 2},
			provider.WC{ID: 7, Opcode: abi.IB_WC_RECV, ImmData: 0xabcd, Flags: abi.IB_WC_WITH_INVALIDATE, QPNum: 2}},
		{"local inv", abi.SiwCQE{ID: 8, Opcode: abi.SIW_OP_INVAL_STAG},
			provider.WC{ID: 8, Opcode: abi.IB_WC_LOCAL_INV}},
		{"reg mr", abi.SiwCQE{ID: 8, Opcode: abi.SIW_OP_REG_MR},
			provider.WC{ID: 8, Opcode: abi.IB_WC_REG_MR}},
		{"unknown opcode", abi.SiwCQE{ID: 9, Opcode: 200},
			provider.WC{ID: 9, Opcode: abi.IB_WC_SEND}},
		{"flush", abi.SiwCQE{ID: 10, Opcode: abi.SIW_OP_RECEIVE, Status: abi.SIW_WC_WR_FLUSH_ERR},
			provider.WC{ID: 10, Opcode: abi.IB_WC_RECV, Status: abi.IB_WC_WR_FLUSH_ERR}},
		{"unknown status", abi.SiwCQE{ID: 11, Opcode: abi.SIW_OP_SEND, Status: 999},
			provider.WC{ID: 11, Opcode: abi.IB_WC_SEND, Status: abi.IB_WC_GENERAL_ERR}},
		// The first values past the enums, which index the tables' last
		// entries.
		{"opcode just past the enum", abi.SiwCQE{ID: 12, Opcode: abi.SIW_NUM_OPCODES},
			provider.WC{ID: 12, Opcode: abi.IB_WC_SEND}},
		{"status just past the enum", abi.SiwCQE{ID: 13, Opcode: abi.SIW_OP_RECEIVE, Status: abi.SIW_NUM_WC_STATUS},
			provider.WC{ID: 13, Opcode: abi.IB_WC_RECV, Status: abi.IB_WC_GENERAL_ERR}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, cq := newCQ(t, 4)
			c.cqe.Flags |= abi.SIW_WQE_VALID
			cq.complete(0, c.cqe)
			// Every field stale: Poll sets each one, to 0 where siw has
			// nothing (a success's status too).
			wc := provider.WC{ID: 77, Status: 99, Opcode: 99, VendorErr: 1, ByteLen: 99, ImmData: 99, QPNum: 99,
				SrcQP: 99, Flags: 99, PKeyIndex: 9, SLID: 9, SL: 9, DLIDPathBits: 9, PortNum: 3}
			if !next(cq, &wc) {
				t.Fatal("Next found no completion")
			}
			if diff := cmp.Diff(c.want, wc); diff != "" {
				t.Errorf("WC (-want +got):\n%s", diff)
			}
			// Only the flags byte is cleared, as rdma-core does; opcode
			// and status stay as the kernel wrote them.
			want := uint32(c.cqe.Opcode)<<8 | uint32(c.cqe.Status)<<16
			if w := mem.Uint32(cq.buf, flagsWord).Load(); w != want {
				t.Errorf("flags word %#x after Next, want %#x", w, want)
			}
			if next(cq, &wc) {
				t.Error("Next found a second completion")
			}
		})
	}
}

func TestCQStatus(t *testing.T) {
	want := map[uint16]uint32{
		abi.SIW_WC_SUCCESS:         abi.IB_WC_SUCCESS,
		abi.SIW_WC_LOC_LEN_ERR:     abi.IB_WC_LOC_LEN_ERR,
		abi.SIW_WC_LOC_PROT_ERR:    abi.IB_WC_LOC_PROT_ERR,
		abi.SIW_WC_LOC_QP_OP_ERR:   abi.IB_WC_LOC_QP_OP_ERR,
		abi.SIW_WC_WR_FLUSH_ERR:    abi.IB_WC_WR_FLUSH_ERR,
		abi.SIW_WC_BAD_RESP_ERR:    abi.IB_WC_BAD_RESP_ERR,
		abi.SIW_WC_LOC_ACCESS_ERR:  abi.IB_WC_LOC_ACCESS_ERR,
		abi.SIW_WC_REM_ACCESS_ERR:  abi.IB_WC_REM_ACCESS_ERR,
		abi.SIW_WC_REM_INV_REQ_ERR: abi.IB_WC_REM_INV_REQ_ERR,
		abi.SIW_WC_GENERAL_ERR:     abi.IB_WC_GENERAL_ERR,
	}
	_, cq := newCQ(t, 16)
	for s, ib := range want {
		cq.complete(int(cq.get), abi.SiwCQE{Flags: abi.SIW_WQE_VALID, Status: s})
		var wc provider.WC
		if !next(cq, &wc) || wc.Status != ib {
			t.Errorf("siw status %d: WC status %d, want %d", s, wc.Status, ib)
		}
	}
}

func TestCQWrap(t *testing.T) {
	_, cq := newCQ(t, 2)
	var wc provider.WC
	for id := uint64(0); id < 5; id++ {
		cq.complete(int(id%2), abi.SiwCQE{ID: id, Flags: abi.SIW_WQE_VALID})
		if !next(cq, &wc) || wc.ID != id {
			t.Fatalf("completion %d: got %v %d", id, wc, wc.ID)
		}
	}
	// Two in flight, taken in order.
	cq.complete(1, abi.SiwCQE{ID: 10, Flags: abi.SIW_WQE_VALID})
	cq.complete(0, abi.SiwCQE{ID: 11, Flags: abi.SIW_WQE_VALID})
	for _, id := range []uint64{10, 11} {
		if !next(cq, &wc) || wc.ID != id {
			t.Fatalf("got %d, want %d", wc.ID, id)
		}
	}
	if next(cq, &wc) {
		t.Fatal("empty CQ gave a completion")
	}
}

func TestCQArm(t *testing.T) {
	_, cq := newCQ(t, 4)
	ctrl := func() uint32 { return mem.At[abi.SiwCQCtrl](cq.buf, 4*cqeSize).Flags }
	if ctrl() != abi.SIW_NOTIFY_NOT {
		t.Fatalf("new CQ armed: %#x", ctrl())
	}
	if !cq.Arm(true) || ctrl() != abi.SIW_NOTIFY_SOLICITED {
		t.Errorf("Arm(solicited): ctrl %#x", ctrl())
	}
	if !cq.Arm(false) || ctrl() != abi.SIW_NOTIFY_SOLICITED|abi.SIW_NOTIFY_NEXT_COMPLETION {
		t.Errorf("Arm(any): ctrl %#x", ctrl())
	}
}

func TestCQNoAllocs(t *testing.T) {
	_, cq := newCQ(t, 8)
	var q provider.CQ = cq
	wcs := make([]provider.WC, 1) // as cq.CQ's scratch, allocated once
	allocs := testing.AllocsPerRun(100, func() {
		cq.complete(int(cq.get), abi.SiwCQE{ID: 1, Flags: abi.SIW_WQE_VALID, Opcode: abi.SIW_OP_RECEIVE})
		if q.Poll(wcs) != 1 || q.Poll(wcs) != 0 || !q.Arm(false) {
			panic("Poll or Arm failed")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per Poll+Arm", allocs)
	}
}

// TestCQTake: Take is Poll of one, handing the element back at once (siw
// has a valid flag per element and no consumer index); Release changes
// nothing.
func TestCQTake(t *testing.T) {
	_, cq := newCQ(t, 4)
	var wc provider.WC
	if cq.Take(&wc) {
		t.Fatal("Take on an empty CQ reported a completion")
	}
	cq.complete(0, abi.SiwCQE{ID: 1, Flags: abi.SIW_WQE_VALID, Opcode: abi.SIW_OP_WRITE, Bytes: 8, QPID: 7})
	cq.complete(1, abi.SiwCQE{ID: 2, Flags: abi.SIW_WQE_VALID, Opcode: abi.SIW_OP_RECEIVE, Bytes: 9, QPID: 7})
	if !cq.Take(&wc) {
		t.Fatal("Take found no completion")
	}
	if diff := cmp.Diff(provider.WC{ID: 1, Opcode: abi.IB_WC_RDMA_WRITE, ByteLen: 8, QPNum: 7}, wc); diff != "" {
		t.Errorf("WC (-want +got):\n%s", diff)
	}
	if w := mem.Uint32(cq.buf, flagsWord).Load(); w != uint32(abi.SIW_OP_WRITE)<<8 {
		t.Errorf("flags word %#x after Take, want %#x (valid flag cleared)", w, uint32(abi.SIW_OP_WRITE)<<8)
	}
	cq.Release()
	if w := mem.Uint32(cq.buf, cqeSize+flagsWord).Load(); w&abi.SIW_WQE_VALID == 0 {
		t.Error("Release cleared the valid flag of a completion not taken")
	}
	if !cq.Take(&wc) || wc.ID != 2 || cq.Take(&wc) {
		t.Errorf("second Take: %+v, or a third found one", wc)
	}
}

// TestCQPollClosed checks that a poll of a closed CQ moves nothing, also
// with a completion in the ring: the ring is unmapped.
func TestCQPollClosed(t *testing.T) {
	tests := []struct {
		name     string
		complete bool
	}{
		{"empty", false},
		{"a completion", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := newCQ(t, 4)
			if tt.complete {
				c.complete(0, abi.SiwCQE{ID: 1, Flags: abi.SIW_WQE_VALID, Opcode: abi.SIW_OP_SEND})
			}
			buf := c.buf
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if n := c.Poll(make([]provider.WC, 4)); n != 0 {
				t.Errorf("Poll of a closed CQ = %d, want 0", n)
			}
			if tt.complete && buf[flagsWord]&abi.SIW_WQE_VALID == 0 {
				t.Error("the poll of the closed CQ handed the element back")
			}
		})
	}
}

// TestCQPollStatusBatch: a poll of many maps the statuses after its
// loop, and only when one failed: each completion of the batch gets its
// own mapped status, whether it comes first, last or across the ring's
// end, and the report says whether any failed. A ring of 3 elements, an
// odd number, wraps by the test of the last element.
func TestCQPollStatusBatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		get    uint32   // the first element
		status []uint16 // of the completions, in order
		room   int      // completions the poll takes
		want   []uint32
		failed bool
	}{
		{"all good", 0, []uint16{0, 0, 0}, 3, []uint32{0, 0, 0}, false},
		{"first", 1, []uint16{abi.SIW_WC_WR_FLUSH_ERR, 0, 0}, 3,
			[]uint32{abi.IB_WC_WR_FLUSH_ERR, 0, 0}, true},
		{"middle and last", 2, []uint16{0, abi.SIW_WC_LOC_PROT_ERR, 999}, 3,
			[]uint32{0, abi.IB_WC_LOC_PROT_ERR, abi.IB_WC_GENERAL_ERR}, true},
		{"failure left for the next poll", 2, []uint16{0, 0, abi.SIW_WC_LOC_LEN_ERR}, 2,
			[]uint32{0, 0}, false},
		{"one", 1, []uint16{abi.SIW_WC_REM_ACCESS_ERR}, 1, []uint32{abi.IB_WC_REM_ACCESS_ERR}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cq := newCQ(t, 3)
			cq.get = tc.get
			for k, s := range tc.status {
				cq.complete(int(tc.get+uint32(k))%3, abi.SiwCQE{ID: uint64(k), Flags: abi.SIW_WQE_VALID, Status: s})
			}
			wcs := make([]provider.WC, tc.room)
			n, failed := cq.PollStatus(wcs)
			got := make([]uint32, n)
			for i := range got {
				got[i] = wcs[i].Status
				if wcs[i].ID != uint64(i) {
					t.Errorf("completion %d has ID %d", i, wcs[i].ID)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || failed != tc.failed {
				t.Errorf("statuses (-want +got):\n%s\nfailed %v, want %v", diff, failed, tc.failed)
			}
			if wantGet := (tc.get + uint32(len(tc.want))) % 3; cq.get != wantGet {
				t.Errorf("get = %d, want %d", cq.get, wantGet)
			}
		})
	}
}

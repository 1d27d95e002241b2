package cq

import (
	"encoding/binary"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/conformance"
	"github.com/purerdma/purerdma/internal/provider/rxe"
)

// rxeCQ is a CQ on the rxe provider over a Go ring of 8 slots, and the
// ring.
func rxeCQ(t *testing.T) (*CQ, []byte) {
	t.Helper()
	buf := conformance.RxeRing(6, 8)
	return rxeCQOn(t, buf), buf
}

// onRing is a CQ on a driver's ring as create leaves it: with the ring's
// concrete driver (drivers) for Poll. A CQ made from its ring alone
// polls too, through the provider.CQ interface (drainCopy).
func onRing(ring provider.CQ) *CQ {
	return &CQ{ring: ring, drv: driversOf(ring)}
}

// rxeCQOn is a CQ on the rxe provider over the ring buf, as the kernel
// would map it.
func rxeCQOn(tb testing.TB, buf []byte) *CQ {
	tb.Helper()
	dev := &conformance.FakeDevice{Maps: map[uint64][]byte{1 << 12: buf}}
	var resp [16]byte // struct rxe_create_cq_resp: mi (offset u64, size u32, pad)
	binary.NativeEndian.PutUint64(resp[0:], 1<<12)
	binary.NativeEndian.PutUint32(resp[8:], uint32(len(buf)))
	ring, err := conformance.CreateCQ(rxe.Driver(), dev, resp[:])
	if err != nil {
		tb.Fatal(err)
	}
	return onRing(ring)
}

// TestPollDirect: through the driver's Poll straight into the caller's
// slice (no scratch), a success arrives whole, immediate data in host
// order, and a failure keeps only what ibv_poll_cq(3) defines, whatever
// the slot or the caller's element held before.
func TestPollDirect(t *testing.T) {
	for _, tc := range []struct {
		name string
		slot []byte // the ib_uverbs_wc the kernel wrote, 48 bytes
		want WC
	}{
		{"receive with immediate", []byte{
			9, 0, 0, 0, 0, 0, 0, 0, // wr_id
			0, 0, 0, 0, // status: success
			0x80, 0, 0, 0, // opcode: IB_WC_RECV
			0, 0, 0, 0, // vendor_err
			0, 0x10, 0, 0, // byte_len 4096
			1, 2, 3, 4, // imm_data, big-endian
			0x11, 0, 0, 0, // qp_num
			0, 0, 0, 0, // src_qp
			byte(abi.IB_WC_WITH_IMM), 0, 0, 0, // wc_flags
			0, 0, 3, 0, // pkey_index, slid
			5, 6, 1, 0, // sl, dlid_path_bits, port_num, reserved
		}, WC{ID: 9, Opcode: OpRecv, ByteLen: 4096, Imm: 0x01020304, QPNum: 0x11, Flags: WithImm, SLID: 3, SL: 5, DLIDPathBits: 6}},
		{"flushed send", []byte{
			7, 0, 0, 0, 0, 0, 0, 0,
			5, 0, 0, 0, // status: IB_WC_WR_FLUSH_ERR
			0xff, 0, 0, 0, // opcode: junk, undefined on error
			0x44, 0, 0, 0, // vendor_err
			0xff, 0xff, 0, 0, // byte_len: junk
			0xaa, 0xbb, 0xcc, 0xdd, // imm: junk
			0x12, 0, 0, 0, // qp_num
			0x99, 0, 0, 0, // src_qp: junk
			0xff, 0, 0, 0, // wc_flags: junk
			1, 0, 2, 0,
			3, 4, 1, 0,
		}, WC{ID: 7, Status: WRFlushErr, VendorErr: 0x44, QPNum: 0x12}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, buf := rxeCQ(t)
			copy(buf[384:], tc.slot)
			conformance.RxeIndex(buf, true).Store(1)
			wc := []WC{{ID: 1, Opcode: 0x77, ByteLen: 0x77, Imm: 0x77, SrcQP: 0x77, Flags: 0x77, SL: 0x77}, {ID: 0x55}}
			n, err := c.Poll(wc)
			if n != 1 || err != nil {
				t.Fatalf("Poll = %d, %v; want 1, nil", n, err)
			}
			if wc[0] != tc.want {
				t.Errorf("got  %+v\nwant %+v", wc[0], tc.want)
			}
			if wc[1] != (WC{ID: 0x55}) {
				t.Errorf("Poll wrote past what it returned: %+v", wc[1])
			}
			if got := conformance.RxeIndex(buf, false).Load(); got != 1 {
				t.Errorf("consumer index %d, want 1", got)
			}
		})
	}
}

// TestPollStackAllocs: a caller's completions on its stack stay there;
// an interface call to the driver would make them escape (1 allocation
// per call).
func TestPollStackAllocs(t *testing.T) {
	c, buf := rxeCQ(t)
	conformance.RxeFillCQ(buf)
	got := testing.AllocsPerRun(100, func() {
		var wc [4]WC
		if n, err := c.Poll(wc[:]); err != nil || n > 4 {
			t.Fatal(n, err)
		}
		conformance.RxeRefillCQ(buf)
	})
	if got != 0 {
		t.Fatalf("%v allocations per Poll into a stack array", got)
	}
}

package verbstest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/cq"
)

// TestDefined keeps what ibv_poll_cq(3) defines of each completion and
// drops the rest: rxe's extras (GRH on RC, WITH_IMM and byte_len on
// sends), a device's syndrome on errors, and the UD-only fields off UD.
func TestDefined(t *testing.T) {
	all := cq.WC{ID: 9, Imm: 0x1234, QPNum: 0x11, SrcQP: 0x22, PKeyIndex: 1, SLID: 2, SL: 3, DLIDPathBits: 4, VendorErr: 0x99, ByteLen: 77}
	with := func(op cq.Opcode, flags cq.Flags) cq.WC {
		w := all
		w.Opcode, w.Flags = op, flags
		return w
	}
	for _, tc := range []struct {
		name string
		in   cq.WC
		ud   bool
		want cq.WC
	}{
		{"RDMA write", with(cq.OpRDMAWrite, cq.WithImm), false,
			cq.WC{ID: 9, Opcode: cq.OpRDMAWrite, QPNum: 0x11}},
		{"send", with(cq.OpSend, cq.WithImm), true,
			cq.WC{ID: 9, Opcode: cq.OpSend, QPNum: 0x11}},
		{"RDMA read", with(cq.OpRDMARead, 0), false,
			cq.WC{ID: 9, Opcode: cq.OpRDMARead, ByteLen: 77, QPNum: 0x11}},
		{"fetch and add", with(cq.OpFetchAdd, 0), false,
			cq.WC{ID: 9, Opcode: cq.OpFetchAdd, ByteLen: 77, QPNum: 0x11}},
		{"compare and swap", with(cq.OpCompSwap, 0), false,
			cq.WC{ID: 9, Opcode: cq.OpCompSwap, ByteLen: 77, QPNum: 0x11}},
		{"RC receive", with(cq.OpRecv, cq.GRH), false,
			cq.WC{ID: 9, Opcode: cq.OpRecv, ByteLen: 77, QPNum: 0x11}},
		{"RC receive with imm", with(cq.OpRecvRDMAWithImm, cq.WithImm|cq.GRH), false,
			cq.WC{ID: 9, Opcode: cq.OpRecvRDMAWithImm, ByteLen: 77, Imm: 0x1234, QPNum: 0x11, Flags: cq.WithImm}},
		{"UD receive", with(cq.OpRecv, cq.GRH), true,
			cq.WC{ID: 9, Opcode: cq.OpRecv, ByteLen: 77, QPNum: 0x11, SrcQP: 0x22, Flags: cq.GRH}},
		{"receive with invalidate", with(cq.OpRecv, cq.WithInv), false,
			cq.WC{ID: 9, Opcode: cq.OpRecv, ByteLen: 77, Imm: 0x1234, QPNum: 0x11, Flags: cq.WithInv}},
		{"flush error", cq.WC{ID: 5, Status: cq.WRFlushErr, QPNum: 0x11, VendorErr: 0xf9}, false,
			cq.WC{ID: 5, Status: cq.WRFlushErr, QPNum: 0x11}},
	} {
		got := Defined([]cq.WC{tc.in}, tc.ud)
		if diff := cmp.Diff([]cq.WC{tc.want}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	in := []cq.WC{with(cq.OpSend, 0)}
	Defined(in, false)
	if in[0] != with(cq.OpSend, 0) {
		t.Errorf("Defined changed its argument: %+v", in[0])
	}
}

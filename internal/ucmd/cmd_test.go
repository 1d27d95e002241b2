package ucmd

import (
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/abi"
)

func TestEncodeWrite(t *testing.T) {
	tests := []struct {
		name            string
		cmd             Cmd
		wantLen         int
		wantCmd         uint32
		wantIn, wantOut uint16
		wantRespAt      int // offset of the response pointer in the written bytes, -1 for none
		wantProvIn      uint16
		wantProvOut     uint16
	}{
		{
			name:    "get_context as rxe sends it",
			cmd:     Cmd{Num: abi.IB_USER_VERBS_CMD_GET_CONTEXT, Req: make([]byte, 8), Resp: make([]byte, 8)},
			wantLen: 16, wantCmd: 0, wantIn: 4, wantOut: 2, wantRespAt: 8,
		},
		{
			name:    "create_cq with rxe's 16-byte response",
			cmd:     Cmd{Num: abi.IB_USER_VERBS_CMD_CREATE_CQ, Req: make([]byte, 32), Resp: make([]byte, 8), DrvOut: make([]byte, 16)},
			wantLen: 40, wantCmd: 18, wantIn: 10, wantOut: 6, wantRespAt: 8,
		},
		{
			name:    "modify_qp has no response",
			cmd:     Cmd{Num: abi.IB_USER_VERBS_CMD_MODIFY_QP, Req: make([]byte, 112)},
			wantLen: 120, wantCmd: 26, wantIn: 30, wantOut: 0, wantRespAt: -1,
		},
		{
			name:    "ex_query_device",
			cmd:     Cmd{Num: abi.IB_USER_VERBS_EX_CMD_QUERY_DEVICE, Ex: true, Req: make([]byte, 8), Resp: make([]byte, 200)},
			wantLen: 32, wantCmd: 0x80000001, wantIn: 1, wantOut: 25, wantRespAt: 8,
		},
		{
			name:    "ex with provider words",
			cmd:     Cmd{Num: abi.IB_USER_VERBS_EX_CMD_CREATE_QP, Ex: true, Req: make([]byte, 16), Resp: make([]byte, 8), DrvIn: make([]byte, 8), DrvOut: make([]byte, 24)},
			wantLen: 48, wantCmd: 0x80000018, wantIn: 2, wantOut: 1, wantRespAt: 8, wantProvIn: 1, wantProvOut: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, out, err := encodeWrite(&tt.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if len(in) != tt.wantLen {
				t.Errorf("len = %d, want %d", len(in), tt.wantLen)
			}
			ne := binary.NativeEndian
			got := []uint64{uint64(ne.Uint32(in)), uint64(ne.Uint16(in[4:])), uint64(ne.Uint16(in[6:]))}
			want := []uint64{uint64(tt.wantCmd), uint64(tt.wantIn), uint64(tt.wantOut)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("header (command, in, out) mismatch (-want +got):\n%s", diff)
			}
			if tt.cmd.Ex {
				if p := [2]uint16{ne.Uint16(in[16:]), ne.Uint16(in[18:])}; p != [2]uint16{tt.wantProvIn, tt.wantProvOut} {
					t.Errorf("provider words = %v, want %d, %d", p, tt.wantProvIn, tt.wantProvOut)
				}
			}
			if len(out) != len(tt.cmd.Resp)+len(tt.cmd.DrvOut) {
				t.Errorf("response buffer %d bytes, want %d", len(out), len(tt.cmd.Resp)+len(tt.cmd.DrvOut))
			}
			if tt.wantRespAt >= 0 {
				if p := ne.Uint64(in[tt.wantRespAt:]); p != addr(out) {
					t.Errorf("response pointer %#x, want %#x", p, addr(out))
				}
			}
		})
	}
}

func TestEncodeWriteRejectsBadSizes(t *testing.T) {
	for _, c := range []Cmd{
		{Num: 1, Ex: true, Req: make([]byte, 12)},
		{Num: 1, Ex: true, Req: make([]byte, 8), Resp: make([]byte, 4)},
		{Num: 3, Req: make([]byte, 6)},
		{Num: 3, Req: make([]byte, 4), Resp: make([]byte, 4)}, // no room for the response pointer
	} {
		if _, _, err := encodeWrite(&c); err == nil {
			t.Errorf("encodeWrite(%+v) succeeded, want an error", c)
		}
	}
}

func TestMethodAttrs(t *testing.T) {
	big := make([]byte, 20)
	out := make([]byte, 48)
	m := NewMethod(abi.UVERBS_OBJECT_DEVICE, abi.UVERBS_METHOD_QUERY_PORT)
	m.In(1, []byte{0x11, 0x22, 0x33})
	m.In(2, big)
	m.Out(3, out)
	m.Const(4, 7)
	m.Handle(5, 42)
	const mand = abi.UVERBS_ATTR_F_MANDATORY
	want := []abi.Attr{
		{AttrID: 1, Len: 3, Flags: mand, Data: binary.NativeEndian.Uint64([]byte{0x11, 0x22, 0x33, 0, 0, 0, 0, 0})},
		{AttrID: 2, Len: 20, Flags: mand, Data: addr(big)},
		{AttrID: 3, Len: 48, Flags: mand, Data: addr(out)},
		{AttrID: 4, Len: 8, Flags: mand, Data: 7},
		{AttrID: 5, Flags: mand, Data: 42},
	}
	if diff := cmp.Diff(want, m.attrs); diff != "" {
		t.Errorf("attrs mismatch (-want +got):\n%s", diff)
	}
	if d, ok := m.Data(5); !ok || d != 42 {
		t.Errorf("Data(5) = %d, %v", d, ok)
	}
	if _, ok := m.Data(9); ok {
		t.Error("Data(9) found an attribute that was never added")
	}
}

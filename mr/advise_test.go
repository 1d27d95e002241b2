package mr

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
	"github.com/purerdma/purerdma/uverbs"
)

// TestAdviseFrame checks UVERBS_METHOD_ADVISE_MR's bytes against what
// libibverbs' ibv_cmd_advise_mr sends: the PD handle, the advice as an
// 8-byte constant, the flags as 4 bytes inline, and the SGE list through
// a pointer (zeroed here; its memory is checked apart). Little-endian.
func TestAdviseFrame(t *testing.T) {
	tests := []struct {
		name   string
		pd     uint32
		advice Advice
		flags  AdviseFlags
		sges   []uverbs.SGE
		frame  []byte // header and attributes, the SGE list pointer zeroed
		list   []byte
	}{{
		name: "prefetch write, flush, one range", pd: 5, advice: PrefetchWrite, flags: AdviseFlush,
		sges: []uverbs.SGE{{Addr: 0x7f0012345000, Length: 0x2000, LKey: 0xabcd}},
		frame: []byte{
			0x58, 0, 0x07, 0, 0x02, 0, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0e, 0, 0, 0, 0, 0, 0, 0, // 88 bytes, MR object, ADVISE_MR, 4 attrs, rxe
			0, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, // PD_HANDLE: handle 5, mandatory
			1, 0, 8, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, // ADVICE: PREFETCH_WRITE, 8 bytes
			2, 0, 4, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, // FLAGS: FLUSH, 4 bytes inline
			3, 0, 16, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // SGE_LIST: 16 bytes at a pointer
		},
		list: []byte{0x00, 0x50, 0x34, 0x12, 0x00, 0x7f, 0, 0, 0x00, 0x20, 0, 0, 0xcd, 0xab, 0, 0},
	}, {
		name: "prefetch, two ranges", pd: 0x10203, advice: Prefetch,
		sges: []uverbs.SGE{{Addr: 0x1000, Length: 64, LKey: 1}, {Addr: 0x3000, Length: 0xffffffff, LKey: 0x80000002}},
		frame: []byte{
			0x58, 0, 0x07, 0, 0x02, 0, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0e, 0, 0, 0, 0, 0, 0, 0,
			0, 0, 0, 0, 1, 0, 0, 0, 0x03, 0x02, 0x01, 0, 0, 0, 0, 0,
			1, 0, 8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // PREFETCH is 0
			2, 0, 4, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			3, 0, 32, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // two SGEs
		},
		list: []byte{
			0x00, 0x10, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0, 1, 0, 0, 0,
			0x00, 0x30, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0x80,
		},
	}, {
		name: "no fault", pd: 1, advice: PrefetchNoFault,
		sges: []uverbs.SGE{{Addr: 0xfff, Length: 1, LKey: 0x11223344}},
		frame: []byte{
			0x58, 0, 0x07, 0, 0x02, 0, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0e, 0, 0, 0, 0, 0, 0, 0,
			0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
			1, 0, 8, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
			2, 0, 4, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			3, 0, 16, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		},
		list: []byte{0xff, 0x0f, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x44, 0x33, 0x22, 0x11},
	}}
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the literals are little-endian")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := adviseMethod(tt.pd, tt.advice, tt.flags, tt.sges)
			if err != nil {
				t.Fatal(err)
			}
			list := m.Payload(abi.UVERBS_ATTR_ADVISE_MR_SGE_LIST)
			if !bytes.Equal(list, tt.list) {
				t.Errorf("SGE list\n got % x\nwant % x", list, tt.list)
			}
			frame := m.Frame(abi.RDMA_DRIVER_RXE)
			if len(frame) != len(tt.frame) {
				t.Fatalf("frame of %d bytes, want %d", len(frame), len(tt.frame))
			}
			ptr := frame[len(frame)-8:]
			if got := binary.NativeEndian.Uint64(ptr); got != ucmd.Addr(list) {
				t.Errorf("SGE list pointer %#x, want the list's address %#x", got, ucmd.Addr(list))
			}
			clear(ptr)
			if !bytes.Equal(frame, tt.frame) {
				t.Errorf("frame\n got % x\nwant % x", frame, tt.frame)
			}
		})
	}
}

// TestAdviseArgs checks what Advise and MR.Advise refuse before the
// kernel: unknown flags, no ranges or too many, a range outside the
// region, a nil or closed region or PD. Unknown advice goes to the
// kernel, whose driver decides.
func TestAdviseArgs(t *testing.T) {
	sge := uverbs.SGE{Addr: 0x1000, Length: 8, LKey: 1}
	for _, tt := range []struct {
		name   string
		advice Advice
		flags  AdviseFlags
		n      int
		want   error
	}{
		{"prefetch", Prefetch, 0, 1, nil},
		{"flush", PrefetchWrite, AdviseFlush, 1, nil},
		{"unknown advice", Advice(3), 0, 1, nil},
		{"unknown flag", Prefetch, 2, 1, uverbs.ErrInvalid},
		{"flush and an unknown flag", Prefetch, AdviseFlush | 1<<31, 1, uverbs.ErrInvalid},
		{"no ranges", Prefetch, 0, 0, uverbs.ErrInvalid},
		{"most ranges", Prefetch, 0, 4095, nil},
		{"too many ranges", Prefetch, 0, 4096, uverbs.ErrInvalid},
	} {
		sges := make([]uverbs.SGE, tt.n)
		for i := range sges {
			sges[i] = sge
		}
		_, err := adviseMethod(1, tt.advice, tt.flags, sges)
		if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}

	// A region of no context: the range and the flags are checked before
	// the kernel is asked.
	buf := make([]byte, 4096)
	r := &MR{buf: buf, pd: &verbs.PD{}}
	for _, tt := range []struct {
		name   string
		off, n int
		flags  AdviseFlags
	}{
		{"past the end", 4000, 97, 0},
		{"offset past the end", 4097, 0, 0},
		{"negative offset", -1, 1, 0},
		{"negative length", 0, -1, 0},
		{"wrapping", 1, int(^uint(0) >> 1), 0},
		{"unknown flag", 0, 8, 4},
	} {
		if err := r.Advise(Prefetch, tt.flags, tt.off, tt.n); !errors.Is(err, uverbs.ErrInvalid) {
			t.Errorf("MR.Advise %s: %v, want ErrInvalid", tt.name, err)
		}
	}
	if err := (*MR)(nil).Advise(Prefetch, 0, 0, 0); !errors.Is(err, uverbs.ErrClosed) {
		t.Errorf("nil MR: %v, want ErrClosed", err)
	}
	r.life.Release(nil)
	if err := r.Advise(Prefetch, 0, 0, 8); !errors.Is(err, uverbs.ErrClosed) {
		t.Errorf("closed MR: %v, want ErrClosed", err)
	}
	if err := Advise(nil, Prefetch, 0, sge); !errors.Is(err, uverbs.ErrInvalid) {
		t.Errorf("nil PD: %v, want ErrInvalid", err)
	}
}

// TestAdviceNames pins the names String prints.
func TestAdviceNames(t *testing.T) {
	for _, tt := range []struct {
		v    interface{ String() string }
		want string
	}{
		{Prefetch, "PREFETCH"},
		{PrefetchWrite, "PREFETCH_WRITE"},
		{PrefetchNoFault, "PREFETCH_NO_FAULT"},
		{Advice(3), "Advice(3)"},
		{AdviseFlush, "FLUSH"},
		{AdviseFlags(0), "AdviseFlags(0)"},
		{AdviseFlags(3), "AdviseFlags(3)"},
	} {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.v, got, tt.want)
		}
	}
}

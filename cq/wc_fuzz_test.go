package cq

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

// FuzzPollWC polls a completion with arbitrary fields, as a provider reads
// them from its ring, into a WC with stale values. A success copies every
// field; an error keeps only what ibv_poll_cq(3) defines for it and
// zeroes the rest, and Err matches ErrCompletion with the same ID, status
// and vendor error.
func FuzzPollWC(f *testing.F) {
	for _, p := range []provider.WC{
		benchPWC,
		{ID: 9, Status: abi.IB_WC_WR_FLUSH_ERR, VendorErr: 7, QPNum: 0x11, Opcode: 3, ByteLen: 99},
		{Status: 0xffffffff, Opcode: 0xffffffff},
	} {
		b, err := binary.Append(nil, binary.NativeEndian, p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p provider.WC
		n := binary.Size(p)
		if len(b) < n {
			b = append(b[:len(b):len(b)], make([]byte, n-len(b))...)
		}
		if err := binary.Read(bytes.NewReader(b), binary.NativeEndian, &p); err != nil {
			t.Fatal(err)
		}
		c := &CQ{ring: &fakeRing{wc: p}}
		wc := []WC{{ID: 1, Status: 2, Opcode: 3, VendorErr: 4, ByteLen: 5, Imm: 6, QPNum: 7, SrcQP: 8,
			Flags: 9, PKeyIndex: 10, SLID: 11, SL: 12, DLIDPathBits: 13}}
		if got, err := c.Poll(wc); got != 1 || err != nil {
			t.Fatalf("Poll = %d, %v", got, err)
		}
		w := wc[0]
		want := WC{ID: p.ID, Status: Status(p.Status), QPNum: p.QPNum, VendorErr: p.VendorErr}
		if p.Status == abi.IB_WC_SUCCESS {
			want = WC{ID: p.ID, Opcode: Opcode(p.Opcode), VendorErr: p.VendorErr, ByteLen: p.ByteLen, Imm: p.ImmData,
				QPNum: p.QPNum, SrcQP: p.SrcQP, Flags: Flags(p.Flags), PKeyIndex: p.PKeyIndex, SLID: p.SLID, SL: p.SL,
				DLIDPathBits: p.DLIDPathBits}
		}
		if w != want {
			t.Fatalf("Poll of %+v gave %+v, want %+v", p, w, want)
		}
		if w.Status.String() == "" || w.Opcode.String() == "" {
			t.Fatalf("status %d or opcode %d prints as nothing", w.Status, w.Opcode)
		}
		err := w.Err()
		if (err == nil) != (w.Status == Success) {
			t.Fatalf("status %v: Err() = %v", w.Status, err)
		}
		if err == nil {
			return
		}
		var ce *CompletionError
		if !errors.Is(err, ErrCompletion) || !errors.As(err, &ce) ||
			*ce != (CompletionError{ID: w.ID, Status: w.Status, VendorErr: w.VendorErr}) || err.Error() == "" {
			t.Fatalf("Err() = %v (%#v)", err, ce)
		}
	})
}

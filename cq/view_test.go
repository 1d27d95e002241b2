package cq

import (
	"testing"
	"unsafe"

	"github.com/purerdma/purerdma/internal/provider"
)

// TestWCLayout pins every field of WC and of provider.WC to the same
// offset, as driverWCs needs: a field moved in either type fails here, not
// as a completion read wrong.
func TestWCLayout(t *testing.T) {
	var w WC
	var p provider.WC
	for _, c := range []struct {
		name     string
		pub, drv uintptr
		want     uintptr
	}{
		{"ID", unsafe.Offsetof(w.ID), unsafe.Offsetof(p.ID), 0},
		{"Status", unsafe.Offsetof(w.Status), unsafe.Offsetof(p.Status), 8},
		{"Opcode", unsafe.Offsetof(w.Opcode), unsafe.Offsetof(p.Opcode), 12},
		{"VendorErr", unsafe.Offsetof(w.VendorErr), unsafe.Offsetof(p.VendorErr), 16},
		{"ByteLen", unsafe.Offsetof(w.ByteLen), unsafe.Offsetof(p.ByteLen), 20},
		{"Imm", unsafe.Offsetof(w.Imm), unsafe.Offsetof(p.ImmData), 24},
		{"QPNum", unsafe.Offsetof(w.QPNum), unsafe.Offsetof(p.QPNum), 28},
		{"SrcQP", unsafe.Offsetof(w.SrcQP), unsafe.Offsetof(p.SrcQP), 32},
		{"Flags", unsafe.Offsetof(w.Flags), unsafe.Offsetof(p.Flags), 36},
		{"PKeyIndex", unsafe.Offsetof(w.PKeyIndex), unsafe.Offsetof(p.PKeyIndex), 40},
		{"SLID", unsafe.Offsetof(w.SLID), unsafe.Offsetof(p.SLID), 42},
		{"SL", unsafe.Offsetof(w.SL), unsafe.Offsetof(p.SL), 44},
		{"DLIDPathBits", unsafe.Offsetof(w.DLIDPathBits), unsafe.Offsetof(p.DLIDPathBits), 45},
		{"size", unsafe.Sizeof(w), unsafe.Sizeof(p), 48},
	} {
		if c.pub != c.want || c.drv != c.want {
			t.Errorf("%s: WC at %d, provider.WC at %d, want %d", c.name, c.pub, c.drv, c.want)
		}
	}
	if unsafe.Alignof(w) != unsafe.Alignof(p) {
		t.Errorf("alignment: WC %d, provider.WC %d", unsafe.Alignof(w), unsafe.Alignof(p))
	}
}

// TestDriverWCs: a completion written through the view reads back in
// the caller's element, fields and order as one.
func TestDriverWCs(t *testing.T) {
	wc := make([]WC, 2)
	v := driverWCs(wc)
	if len(v) != 2 {
		t.Fatalf("view of %d, want 2", len(v))
	}
	v[1] = provider.WC{ID: 7, Status: 0, Opcode: 2, VendorErr: 3, ByteLen: 4, ImmData: 5, QPNum: 6, SrcQP: 8,
		Flags: 9, PKeyIndex: 10, SLID: 11, SL: 12, DLIDPathBits: 13, PortNum: 1}
	want := WC{ID: 7, Status: Success, Opcode: 2, VendorErr: 3, ByteLen: 4, Imm: 5, QPNum: 6, SrcQP: 8,
		Flags: 9, PKeyIndex: 10, SLID: 11, SL: 12, DLIDPathBits: 13}
	if wc[1] != want || wc[0] != (WC{}) {
		t.Fatalf("got %+v, %+v; want zero, %+v", wc[0], wc[1], want)
	}
}

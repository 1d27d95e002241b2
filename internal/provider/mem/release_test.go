package mem

import (
	"sync/atomic"
	"testing"
)

func TestStoreRelease(t *testing.T) {
	b := make([]byte, 16)
	for _, v := range []uint32{1, 0xdeadbeef, 0} {
		w := Uint32(b, 8)
		StoreRelease(w, v)
		if got := w.Load(); got != v {
			t.Errorf("StoreRelease(%#x): loaded %#x", v, got)
		}
		if b[8] != byte(v) || b[11] != byte(v>>24) || b[0] != 0 || b[12] != 0 {
			t.Errorf("StoreRelease(%#x) wrote % x", v, b)
		}
	}
	var x atomic.Uint32
	if allocs := testing.AllocsPerRun(100, func() { StoreRelease(&x, 7) }); allocs != 0 {
		t.Errorf("%v allocs", allocs)
	}
}

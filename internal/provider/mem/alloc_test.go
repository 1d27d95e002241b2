package mem

import (
	"encoding/binary"
	"os"
	"testing"
)

func TestAlloc(t *testing.T) {
	ps := os.Getpagesize()
	for _, size := range []int{1, 64, ps - 1, ps, ps + 1, 3 * ps} {
		b, err := Alloc(size)
		if err != nil {
			t.Fatalf("Alloc(%d): %v", size, err)
		}
		want := (size + ps - 1) / ps * ps
		if len(b) != size || cap(b) != want {
			t.Errorf("Alloc(%d): len %d cap %d, want %d and %d", size, len(b), cap(b), size, want)
		}
		if a := Addr(b); a%uint64(ps) != 0 {
			t.Errorf("Alloc(%d) at %#x: not page-aligned", size, a)
		}
		for i, c := range b[:cap(b)] {
			if c != 0 {
				t.Fatalf("Alloc(%d): byte %d is %#x", size, i, c)
			}
		}
		b[size-1] = 1
		if err := Free(b); err != nil {
			t.Errorf("Free: %v", err)
		}
	}
	for _, size := range []int{0, -1} {
		if _, err := Alloc(size); err == nil {
			t.Errorf("Alloc(%d) succeeded", size)
		}
	}
	if err := Free(nil); err != nil {
		t.Errorf("Free(nil): %v", err)
	}
}

func TestUint64(t *testing.T) {
	b := make([]byte, 24)
	Uint64(b, 8).Store(0x0102030405060708)
	if got := binary.NativeEndian.Uint64(b[8:]); got != 0x0102030405060708 || b[7] != 0 || b[16] != 0 {
		t.Errorf("Uint64 store wrote % x", b)
	}
	defer func() {
		if recover() == nil {
			t.Error("misaligned Uint64 did not panic")
		}
	}()
	Uint64(b, 4)
}

package mmio

import (
	"encoding/binary"
	"testing"
	"unsafe"
)

func TestWrite64(t *testing.T) {
	b := make([]byte, 24)
	var v [8]byte
	copy(v[:], []byte{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88})
	Write64(b, 8, binary.NativeEndian.Uint64(v[:]))
	want := []byte{
		0, 0, 0, 0, 0, 0, 0, 0,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0, 0, 0, 0, 0, 0, 0, 0,
	}
	if string(b) != string(want) {
		t.Errorf("Write64 wrote % x", b)
	}
	c := make([]byte, 24)
	Write64To((*[8]byte)(c[8:]), binary.NativeEndian.Uint64(v[:]))
	if string(c) != string(want) {
		t.Errorf("Write64To wrote % x", c)
	}
	d := make([]byte, 24)
	FencedStore64((*[8]byte)(d[8:]), binary.NativeEndian.Uint64(v[:]))
	if string(d) != string(want) {
		t.Errorf("FencedStore64 wrote % x", d)
	}
}

func TestCopy64(t *testing.T) {
	src := make([]byte, 80)
	for i := range src {
		src[i] = byte(i)
	}
	dst := make([]byte, 80)
	Copy64(dst, 8, src, 16)
	for i, c := range dst {
		want := byte(0)
		if i >= 8 && i < 72 {
			want = byte(i + 8)
		}
		if c != want {
			t.Fatalf("dst[%d] = %d, want %d", i, c, want)
		}
	}
}

// TestCopyBlocks: each block count copies exactly its bytes, in place,
// and nothing around them.
func TestCopyBlocks(t *testing.T) {
	for _, tc := range []struct{ blocks, dstOff, srcOff int }{
		{1, 0, 0}, {1, 8, 16}, {2, 64, 0}, {3, 8, 8}, {4, 0, 64},
	} {
		src := make([]byte, 320)
		for i := range src {
			src[i] = byte(i)
		}
		dst := make([]byte, 320)
		CopyBlocks(unsafe.Pointer(&dst[tc.dstOff]), unsafe.Pointer(&src[tc.srcOff]), tc.blocks)
		for i, c := range dst {
			want := byte(0)
			if n := i - tc.dstOff; n >= 0 && n < 64*tc.blocks {
				want = byte(tc.srcOff + n)
			}
			if c != want {
				t.Fatalf("%+v: dst[%d] = %d, want %d", tc, i, c, want)
			}
		}
	}
}

func TestStore64(t *testing.T) {
	b := make([]byte, 24)
	Store64(unsafe.Pointer(&b[8]), binary.NativeEndian.Uint64([]byte{1, 2, 3, 4, 5, 6, 7, 8}))
	if want := []byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0}; string(b) != string(want) {
		t.Errorf("Store64 wrote % x", b)
	}
}

func TestMisaligned(t *testing.T) {
	b := make([]byte, 128)
	for name, f := range map[string]func(){
		"Write64": func() { Write64(b, 4, 0) },
		"Copy64":  func() { Copy64(b, 0, b, 60) },
		"short":   func() { Copy64(b, 72, b, 0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}

func TestNoAllocs(t *testing.T) {
	b := make([]byte, 128)
	if n := testing.AllocsPerRun(100, func() {
		ToDevice()
		FromDevice()
		LockedWCStart()
		Write64(b, 0, 1)
		Copy64(b, 64, b, 0)
		CopyBlocks(unsafe.Pointer(&b[64]), unsafe.Pointer(&b[0]), 1)
		Store64(unsafe.Pointer(&b[0]), 2)
		FlushWrites()
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

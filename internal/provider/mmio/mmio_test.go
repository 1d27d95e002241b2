package mmio

import (
	"encoding/binary"
	"testing"
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
		FlushWrites()
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

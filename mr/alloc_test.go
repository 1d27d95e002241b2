package mr

import (
	"errors"
	"testing"
)

func TestAllocFree(t *testing.T) {
	b, err := Alloc(10000)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 10000 || base(b)%4096 != 0 {
		t.Errorf("Alloc(10000): len %d, address %#x; want 10000 page-aligned bytes", len(b), base(b))
	}
	b[9999] = 1 // writable
	if _, m := lookup(b[100:200]); m == nil || !m.owned {
		t.Error("a sub-slice of allocated memory is not found")
	}
	if err := Free(b[1:]); !errors.Is(err, ErrNotMapped) {
		t.Errorf("Free of a sub-slice: %v, want ErrNotMapped", err)
	}
	if err := Free(b); err != nil {
		t.Fatalf("Free: %v", err)
	}
	if err := Free(b); !errors.Is(err, ErrNotMapped) {
		t.Errorf("second Free: %v, want ErrNotMapped", err)
	}
}

func TestAllocBadSize(t *testing.T) {
	for _, n := range []int{0, -1} {
		if _, err := Alloc(n); err == nil {
			t.Errorf("Alloc(%d) succeeded", n)
		}
	}
}

func TestGoMemoryIsNotMapped(t *testing.T) {
	b := make([]byte, 4096)
	if _, m := lookup(b); m != nil {
		t.Error("Go heap memory was taken as mapped")
	}
	Mapped(b)
	if _, m := lookup(b); m == nil || m.owned {
		t.Error("Mapped memory not found, or taken as owned")
	}
	if err := Free(b); !errors.Is(err, ErrNotMapped) {
		t.Errorf("Free of Mapped memory: %v, want ErrNotMapped", err)
	}
	if err := Forget(b); err != nil {
		t.Errorf("Forget: %v", err)
	}
	if _, m := lookup(b); m != nil {
		t.Error("Forget left the mapping")
	}
}

func lookup(b []byte) (int, *mapping) {
	mappings.Lock()
	defer mappings.Unlock()
	return find(base(b), len(b))
}

func TestFindRange(t *testing.T) {
	b, err := Alloc(8192)
	if err != nil {
		t.Fatal(err)
	}
	defer Free(b)
	p := base(b)
	mappings.Lock()
	defer mappings.Unlock()
	for _, tt := range []struct {
		p    uintptr
		n    int
		want bool
	}{
		{p, 8192, true},
		{p + 4096, 4096, true},
		{p + 4096, 4097, false}, // past the end
		{p - 1, 2, false},       // before the start
		{p + 8192, 1, false},
	} {
		if _, m := find(tt.p, tt.n); (m != nil) != tt.want {
			t.Errorf("find(start%+d, %d) found %v, want %v", int(tt.p-p), tt.n, m != nil, tt.want)
		}
	}
}

package uverbs

import "testing"

func TestFlushAndAtomicWriteNames(t *testing.T) {
	for _, tt := range []struct {
		got  interface{ String() string }
		want string
	}{
		{WRFlush, "FLUSH"},
		{WRAtomicWrite, "ATOMIC_WRITE"},
		{WROpcode(14), "FLUSH"},
		{WROpcode(15), "ATOMIC_WRITE"},
		{WROpcode(16), "WROpcode(16)"},
		{FlushGlobal, "GLOBAL"},
		{FlushPersistent, "PERSISTENT"},
		{FlushType(3), "GLOBAL|PERSISTENT"},
		{FlushType(4), "FlushType(4)"},
		{FlushRange, "RANGE"},
		{FlushMR, "MR"},
		{FlushLevel(2), "FlushLevel(2)"},
	} {
		if s := tt.got.String(); s != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.got, s, tt.want)
		}
	}
}

// TestDeviceCaps decodes capability words with each of bits 38-40, and
// with bits no kernel defines yet, which must change nothing.
func TestDeviceCaps(t *testing.T) {
	for _, tt := range []struct {
		name        string
		caps        DeviceCap
		flush       FlushType
		atomicWrite bool
	}{
		{"none", 0, 0, false},
		{"flush global", 1 << 38, FlushGlobal, false},
		{"flush persistent", 1 << 39, FlushPersistent, false},
		{"atomic write", 1 << 40, 0, true},
		{"all three", 0x1c000000000, FlushGlobal | FlushPersistent, true},
		{"unknown bits only", 1<<63 | 1<<41 | 1<<37, 0, false},
		{"unknown bits and atomic write", 1<<63 | 1<<41 | 1<<40, 0, true},
	} {
		a := DeviceAttr{DeviceCapFlags: tt.caps}
		if got := a.FlushTypes(); got != tt.flush {
			t.Errorf("%s: FlushTypes() = %s, want %s", tt.name, got, tt.flush)
		}
		if got := a.AtomicWrite(); got != tt.atomicWrite {
			t.Errorf("%s: AtomicWrite() = %v, want %v", tt.name, got, tt.atomicWrite)
		}
	}
}

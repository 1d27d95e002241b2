package cq

import "testing"

func TestOpcodeNames(t *testing.T) {
	for _, tt := range []struct {
		op   Opcode
		want string
	}{
		{OpTSO, "TSO"},
		{8, "FLUSH"},
		{9, "ATOMIC_WRITE"},
		{OpFlush, "FLUSH"},
		{OpAtomicWrite, "ATOMIC_WRITE"},
		{10, "Opcode(10)"},
		{128, "RECV"},
	} {
		if got := tt.op.String(); got != tt.want {
			t.Errorf("Opcode(%d).String() = %q, want %q", uint32(tt.op), got, tt.want)
		}
	}
}

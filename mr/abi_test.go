package mr

import (
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
)

// TestABIConstants pins every exported constant that is written as a literal
// to the kernel ABI constant its comment names, so that the generated
// internal/abi still governs the values.
func TestABIConstants(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uint64
	}{
		{"ChangeBuffer", uint64(ChangeBuffer), abi.IB_MR_REREG_TRANS},
		{"ChangePD", uint64(ChangePD), abi.IB_MR_REREG_PD},
		{"ChangeAccess", uint64(ChangeAccess), abi.IB_MR_REREG_ACCESS},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
}

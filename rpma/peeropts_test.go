package rpma_test

import (
	"testing"

	"github.com/purerdma/purerdma/rpma"
)

func TestFlushModeString(t *testing.T) {
	for _, tt := range []struct {
		m    rpma.FlushMode
		want string
	}{
		{rpma.FlushAuto, "auto"},
		{rpma.FlushEmulated, "emulated"},
		{2, "FlushMode(2)"},
	} {
		if got := tt.m.String(); got != tt.want {
			t.Errorf("FlushMode(%d).String() = %q, want %q", int(tt.m), got, tt.want)
		}
	}
}

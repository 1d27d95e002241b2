package rpma

import (
	"errors"
	"math"
	"testing"

	"github.com/purerdma/purerdma/mr"
)

// TestRanges checks the local and remote range checks every operation
// goes through, at the edges where off+n overflows an int.
func TestRanges(t *testing.T) {
	empty := &MR{region: &mr.MR{}, usage: UsageReadDst} // a region of 0 bytes
	closed := &MR{region: &mr.MR{}, usage: UsageReadDst}
	closed.closed.Store(true)
	remote := &RemoteMR{addr: 1 << 40, size: 4096, usage: UsageReadSrc}
	for _, tt := range []struct {
		name   string
		check  func() error
		wantOK bool
	}{
		{"local: empty range", func() error { _, err := empty.sge(0, 0); return err }, true},
		{"local: huge offset", func() error { _, err := empty.sge(math.MaxInt, 1); return err }, false},
		{"local: huge length", func() error { _, err := empty.sge(1, math.MaxInt); return err }, false},
		{"local: deregistered", func() error { _, err := closed.sge(0, 0); return err }, false},
		{"remote: whole region", func() error { _, err := remote.at(0, 4096); return err }, true},
		{"remote: huge offset", func() error { _, err := remote.at(math.MaxInt, math.MaxInt); return err }, false},
		{"remote: one past the end", func() error { _, err := remote.at(4096, 1); return err }, false},
	} {
		err := tt.check()
		switch {
		case tt.wantOK && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case !tt.wantOK && !errors.Is(err, ErrInval):
			t.Errorf("%s: %v, want ErrInval", tt.name, err)
		}
	}
}

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
		name  string
		check func() error
		want  error // nil: the range is fine
	}{
		{"local: empty range", func() error { _, err := empty.sge(0, 0); return err }, nil},
		{"local: huge offset", func() error { _, err := empty.sge(math.MaxInt, 1); return err }, ErrInvalid},
		{"local: huge length", func() error { _, err := empty.sge(1, math.MaxInt); return err }, ErrInvalid},
		// A deregistered region is a closed object, whatever the range.
		{"local: deregistered", func() error { _, err := closed.sge(0, 0); return err }, ErrClosed},
		{"remote: whole region", func() error { _, err := remote.at(0, 4096); return err }, nil},
		{"remote: huge offset", func() error { _, err := remote.at(math.MaxInt, math.MaxInt); return err }, ErrInvalid},
		{"remote: one past the end", func() error { _, err := remote.at(4096, 1); return err }, ErrInvalid},
	} {
		err := tt.check()
		switch {
		case tt.want == nil && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != nil && !errors.Is(err, tt.want):
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}

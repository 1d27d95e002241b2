package rdmacm

import (
	"errors"
	"math"
	"syscall"
	"testing"

	"github.com/purerdma/purerdma/mr"
)

// TestSGERange checks the verbs helpers' range check where off+n
// overflows an int.
func TestSGERange(t *testing.T) {
	m := &mr.MR{} // a region of 0 bytes
	for _, tt := range []struct{ off, n int }{
		{math.MaxInt, 1},
		{1, math.MaxInt},
		{-1, 0},
		{0, 1},
	} {
		if _, err := sge(m, tt.off, tt.n); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("sge(%d, %d) = %v, want EINVAL", tt.off, tt.n, err)
		}
	}
	if _, err := sge(m, 0, 0); err != nil {
		t.Errorf("sge(0, 0) = %v", err)
	}
}

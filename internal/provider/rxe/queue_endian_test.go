package rxe

import (
	"encoding/binary"
	"testing"
)

// TestIsBigEndian checks the build-tag constant against the host.
func TestIsBigEndian(t *testing.T) {
	if got := binary.NativeEndian.Uint16([]byte{0, 1}) == 1; got != isBigEndian {
		t.Errorf("isBigEndian = %v, the host says %v", isBigEndian, got)
	}
}

package rpma

import (
	"testing"

	"github.com/purerdma/purerdma/uverbs"
)

// TestUsageToAccess checks rpma_peer_usage2access as librpma 1.2 (no
// native flush) and 1.3 (native flush) map usages, with the access bits
// as literals: LOCAL_WRITE 1, REMOTE_WRITE 2, REMOTE_READ 4,
// FLUSH_GLOBAL 0x100, FLUSH_PERSISTENT 0x200.
func TestUsageToAccess(t *testing.T) {
	tests := []struct {
		usage             Usage
		emulated, native  uverbs.Access
		iwarpUsesRemWrite bool
	}{
		{UsageReadSrc, 0x4, 0x4, false},
		{UsageReadDst, 0x1, 0x1, true},
		{UsageWriteSrc, 0x1, 0x1, false},
		{UsageWriteDst, 0x3, 0x3, false},
		{UsageFlushTypeVisibility, 0x4, 0x100, false},
		{UsageFlushTypePersistent, 0x4, 0x200, false},
		{UsageFlushTypeVisibility | UsageFlushTypePersistent, 0x4, 0x300, false},
		{UsageWriteDst | UsageFlushTypeVisibility, 0x7, 0x103, false},
		{UsageReadSrc | UsageWriteDst | UsageFlushTypeVisibility, 0x7, 0x107, false},
		{UsageSend, 0, 0, false},
		{UsageRecv, 0x1, 0x1, false},
	}
	for _, tt := range tests {
		for _, p := range []struct {
			peer *Peer
			want uverbs.Access
		}{
			{&Peer{}, tt.emulated},
			{&Peer{nativeFlush: true}, tt.native},
			{&Peer{iwarp: true}, tt.emulated},
		} {
			want := p.want
			if p.peer.iwarp && tt.iwarpUsesRemWrite {
				want |= 0x2 // iWARP's read responses are remote writes
			}
			if got := p.peer.access(tt.usage); got != want {
				t.Errorf("usage %#x, native flush %v, iWARP %v: access %#x, want %#x",
					uint8(tt.usage), p.peer.nativeFlush, p.peer.iwarp, uint32(got), uint32(want))
			}
		}
	}
}

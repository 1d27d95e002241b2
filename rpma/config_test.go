package rpma_test

import (
	"testing"
	"time"

	"github.com/purerdma/purerdma/rpma"
)

// TestConnConfigDefaults checks rpma_conn_cfg_new's defaults, which the
// getters return on a new config.
func TestConnConfigDefaults(t *testing.T) {
	c := rpma.DefaultConnConfig()
	want := rpma.ConnConfig{Timeout: 1000 * time.Millisecond, CQSize: 10, RCQSize: 0, SQSize: 10, RQSize: 10}
	if c != want {
		t.Errorf("DefaultConnConfig() = %+v, want %+v", c, want)
	}
}

// TestSRQConfigDefaults checks rpma_srq_cfg_new's defaults
// (RPMA_DEFAULT_SRQ_SIZE in the code, not the man page's 100).
func TestSRQConfigDefaults(t *testing.T) {
	c := rpma.DefaultSRQConfig()
	want := rpma.SRQConfig{RQSize: 20, RCQSize: 20}
	if c != want {
		t.Errorf("DefaultSRQConfig() = %+v, want %+v", c, want)
	}
}

// TestConstants checks the constants that stand for librpma getters and
// macros.
func TestConstants(t *testing.T) {
	for _, tt := range []struct {
		name      string
		got, want int
	}{
		{"DescriptorSize (rpma_mr_get_descriptor_size)", rpma.DescriptorSize, 21},
		{"PeerConfigDescriptorSize (rpma_peer_cfg_get_descriptor_size)", rpma.PeerConfigDescriptorSize, 1},
		{"AtomicWriteAlignment", rpma.AtomicWriteAlignment, 8},
		{"CompletionOnError", int(rpma.CompletionOnError), 1},
		{"CompletionAlways", int(rpma.CompletionAlways), 3},
		{"UsageReadSrc", int(rpma.UsageReadSrc), 1 << 0},
		{"UsageReadDst", int(rpma.UsageReadDst), 1 << 1},
		{"UsageWriteSrc", int(rpma.UsageWriteSrc), 1 << 2},
		{"UsageWriteDst", int(rpma.UsageWriteDst), 1 << 3},
		{"UsageFlushTypeVisibility", int(rpma.UsageFlushTypeVisibility), 1 << 4},
		{"UsageFlushTypePersistent", int(rpma.UsageFlushTypePersistent), 1 << 5},
		{"UsageSend", int(rpma.UsageSend), 1 << 6},
		{"UsageRecv", int(rpma.UsageRecv), 1 << 7},
		{"FlushPersistent", int(rpma.FlushPersistent), 0},
		{"FlushVisibility", int(rpma.FlushVisibility), 1},
		{"ContextLocal", int(rpma.ContextLocal), 0},
		{"ContextRemote", int(rpma.ContextRemote), 1},
		{"AdvicePrefetch", int(rpma.AdvicePrefetch), 0},
		{"AdvicePrefetchWrite", int(rpma.AdvicePrefetchWrite), 1},
		{"AdvicePrefetchNoFault", int(rpma.AdvicePrefetchNoFault), 2},
		{"AdviseFlush", int(rpma.AdviseFlush), 1},
	} {
		if tt.got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

package rpma_test

import (
	"errors"
	"testing"

	"github.com/purerdma/purerdma/rpma"
	"github.com/purerdma/purerdma/uverbs"
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

func TestODPModeString(t *testing.T) {
	for _, tt := range []struct {
		m    rpma.ODPMode
		want string
	}{
		{rpma.ODPFallback, "fallback"},
		{rpma.ODPOff, "off"},
		{rpma.ODPAlways, "always"},
		{3, "ODPMode(3)"},
	} {
		if got := tt.m.String(); got != tt.want {
			t.Errorf("ODPMode(%d).String() = %q, want %q", int(tt.m), got, tt.want)
		}
	}
}

// TestPeerOptionsRefused: modes outside their enums are ErrInvalid before
// the device is asked anything (the context here is a zero one).
func TestPeerOptionsRefused(t *testing.T) {
	for _, opts := range []rpma.PeerOptions{{Flush: 2}, {Flush: -1}, {ODP: 3}, {ODP: -1}} {
		if _, err := rpma.NewPeerWithOptions(&uverbs.Context{}, opts); !errors.Is(err, rpma.ErrInvalid) {
			t.Errorf("NewPeerWithOptions(%+v) = %v, want ErrInvalid", opts, err)
		}
	}
}

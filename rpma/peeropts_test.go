package rpma_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/purerdma/purerdma/rpma"
	"github.com/purerdma/purerdma/uverbs"
)

// TestModeStrings: the names the peer's modes print in log records, and
// a value outside each enum.
func TestModeStrings(t *testing.T) {
	for _, tt := range []struct {
		m    fmt.Stringer
		want string
	}{
		{rpma.FlushAuto, "auto"},
		{rpma.FlushEmulated, "emulated"},
		{rpma.FlushMode(2), "FlushMode(2)"},
		{rpma.ODPFallback, "fallback"},
		{rpma.ODPOff, "off"},
		{rpma.ODPAlways, "always"},
		{rpma.ODPMode(3), "ODPMode(3)"},
	} {
		if got := tt.m.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.m, got, tt.want)
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

//go:build purerdma_stub

package unsupported

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/rpma"
	"github.com/purerdma/purerdma/rsocket"
	"github.com/purerdma/purerdma/uverbs"
)

// TestEntryPoints calls each public entry point that would reach the
// kernel and checks that it fails, without panicking, with an error that
// says so: errors.ErrUnsupported always, uverbs.ErrNoDevice as well where a
// device is asked for.
func TestEntryPoints(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dev := uverbs.Device{Name: "rxe0", Char: "uverbs0", Driver: uverbs.DriverRXE}
	lo := netip.MustParseAddr("127.0.0.1")

	for _, tc := range []struct {
		name     string
		device   bool // the error must match uverbs.ErrNoDevice too
		call     func() (any, error)
		resultOK func(any) bool // the result is what a failure returns
	}{
		{name: "uverbs.Devices", device: true, call: func() (any, error) { return uverbs.Devices() }},
		{name: "uverbs.DeviceByName", device: true, call: func() (any, error) { return uverbs.DeviceByName("rxe0") }},
		{name: "uverbs.Open", device: true, call: func() (any, error) { return uverbs.Open(dev) }},
		{name: "uverbs.OpenName", device: true, call: func() (any, error) { return uverbs.OpenName("rxe0") }},
		{name: "uverbs.Device.PortCounters", device: true, call: func() (any, error) { return dev.PortCounters(1) }},
		{name: "uverbs.Device.Resources", call: func() (any, error) { return dev.Resources() }},
		{name: "rdmacm.NewEventChannel", device: true, call: func() (any, error) { return rdmacm.NewEventChannel() }},
		{name: "rsocket.Dial", device: true, call: func() (any, error) { return rsocket.Dial(ctx, "rdma", "127.0.0.1:7471") }},
		{name: "rsocket.Listen", device: true, call: func() (any, error) { return rsocket.Listen("rdma", "127.0.0.1:0") }},
		{name: "rpma.ContextByAddr local", device: true, call: func() (any, error) {
			return rpma.ContextByAddr(ctx, lo, rpma.ContextLocal)
		}},
		{name: "rpma.ContextByAddr remote", device: true, call: func() (any, error) {
			return rpma.ContextByAddr(ctx, lo, rpma.ContextRemote)
		}},
		{name: "mr.Alloc", call: func() (any, error) { return mr.Alloc(4096) }},
		{name: "cq.NewChannel", call: func() (any, error) { return cq.NewChannel(nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.call()
			if err == nil {
				t.Fatalf("no error; result %v", res)
			}
			if !isNil(res) {
				t.Errorf("result %v beside the error %v, want none", res, err)
			}
			if !errors.Is(err, errors.ErrUnsupported) {
				t.Errorf("error %q does not match errors.ErrUnsupported", err)
			}
			if tc.device && !errors.Is(err, uverbs.ErrNoDevice) {
				t.Errorf("error %q does not match uverbs.ErrNoDevice", err)
			}
			if !strings.Contains(err.Error(), "purerdma: ") {
				t.Errorf("error %q does not come from the stubs", err)
			}
		})
	}
}

// isNil reports whether v, a result returned beside an error, is empty: a
// nil pointer or slice, or a zero Device.
func isNil(v any) bool {
	switch v := v.(type) {
	case *uverbs.Context:
		return v == nil
	case *rdmacm.EventChannel:
		return v == nil
	case *rsocket.Conn:
		return v == nil
	case *rsocket.Listener:
		return v == nil
	case *cq.Channel:
		return v == nil
	case []uverbs.Device:
		return v == nil
	case []uverbs.Counter:
		return v == nil
	case []uverbs.Resource:
		return v == nil
	case []byte:
		return v == nil
	case uverbs.Device:
		return v == uverbs.Device{}
	}
	return false
}

package rsocket_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rsocket"
)

// testenvCall calls every method of obj, nil or closed, through
// testenv.CallMethods: errors must match net.ErrClosed.
func testenvCall(t *testing.T, obj any) {
	t.Helper()
	if n := testenv.CallMethods(t, obj, net.ErrClosed); n == 0 {
		t.Fatalf("no methods called on %T", obj)
	}
}

// TestNilObjects: every method of a nil Conn and a nil Listener returns
// net.ErrClosed (or nothing) and does not panic.
func TestNilObjects(t *testing.T) {
	testenvCall(t, (*rsocket.Conn)(nil))
	testenvCall(t, (*rsocket.Listener)(nil))
}

// TestBadAddress: networks other than rdma, rdma4 and rdma6, malformed
// addresses and ports fail before any device is touched.
func TestBadAddress(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ network, addr string }{
		{"tcp", "127.0.0.1:1"}, {"rdma", "127.0.0.1"}, {"rdma", "127.0.0.1:x"},
		{"rdma", "127.0.0.1:65536"}, {"rdma", "[::1:1"}, {"udp", ":1"},
	} {
		if _, err := rsocket.Dial(ctx, c.network, c.addr); err == nil {
			t.Errorf("Dial(%q, %q) succeeded", c.network, c.addr)
		} else if _, ok := err.(*net.OpError); !ok {
			t.Errorf("Dial(%q, %q): %T %v, want a *net.OpError", c.network, c.addr, err, err)
		}
		if _, err := rsocket.Listen(c.network, c.addr); err == nil {
			t.Errorf("Listen(%q, %q) succeeded", c.network, c.addr)
		}
	}
	if _, err := rsocket.Dial(ctx, "tcp", "127.0.0.1:"+strconv.Itoa(1)); !errors.Is(err, rsocket.ErrNetwork) {
		t.Errorf("Dial on tcp: %v, want ErrNetwork", err)
	}
}

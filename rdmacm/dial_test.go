package rdmacm

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/uverbs"
)

// TestLookup checks how Dial and Listen turn "host:port" into the
// addresses they try: literals of both families (IPv6 in brackets, a
// mapped IPv4 as IPv4), service names, an empty host and port for
// Listen, and host names through the resolver.
func TestLookup(t *testing.T) {
	if testenv.InVM() {
		t.Skip("the guest has no /etc/hosts or /etc/services; the host's resolver is tested")
	}
	ap := netip.MustParseAddrPort
	tests := []struct {
		address string
		listen  bool
		want    []netip.AddrPort
	}{
		{"192.0.2.1:7471", false, []netip.AddrPort{ap("192.0.2.1:7471")}},
		{"[2001:db8::1]:7471", false, []netip.AddrPort{ap("[2001:db8::1]:7471")}},
		{"[::ffff:192.0.2.1]:7471", false, []netip.AddrPort{ap("192.0.2.1:7471")}},
		{"192.0.2.1:0", true, []netip.AddrPort{ap("192.0.2.1:0")}},
		{":7471", true, []netip.AddrPort{ap("0.0.0.0:7471")}},
		{":", true, []netip.AddrPort{ap("0.0.0.0:0")}},
	}
	var c Config
	for _, tt := range tests {
		got, err := c.lookup(context.Background(), tt.address, tt.listen)
		if err != nil {
			t.Errorf("lookup(%q, listen %v): %v", tt.address, tt.listen, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); diff != "" {
			t.Errorf("lookup(%q, listen %v) (-want +got):\n%s", tt.address, tt.listen, diff)
		}
	}

	// A host name goes to the resolver: localhost is in /etc/hosts.
	got, err := c.lookup(context.Background(), "localhost:7471", false)
	if err != nil {
		t.Fatalf("lookup(localhost:7471): %v", err)
	}
	if len(got) == 0 || !got[0].Addr().IsLoopback() || got[0].Port() != 7471 {
		t.Errorf("lookup(localhost:7471) = %v, want loopback addresses at port 7471", got)
	}
}

// TestLookupResolver checks that Config.Resolver is the one asked, and
// that its failure is Dial's.
func TestLookupResolver(t *testing.T) {
	var dials atomic.Int32
	refused := errors.New("injected: no DNS here")
	c := Config{Resolver: &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		dials.Add(1)
		return nil, refused
	}}}
	_, err := c.Dial(context.Background(), "rdma-server.example:7471")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) {
		t.Errorf("Dial through a failing resolver: %v, want a *net.DNSError", err)
	}
	if dials.Load() == 0 {
		t.Errorf("the Config's resolver was not asked")
	}
}

// TestDialBadAddress checks the addresses Dial and Listen refuse before
// they reach a device, so also on the host.
func TestDialBadAddress(t *testing.T) {
	tests := []struct {
		address string
		listen  bool
		want    error
	}{
		{"192.0.2.1", false, uverbs.ErrInvalid},           // no port
		{"192.0.2.1:", false, uverbs.ErrInvalid},          // empty port
		{"192.0.2.1:0", false, uverbs.ErrInvalid},         // port 0
		{":7471", false, uverbs.ErrInvalid},               // no host to dial
		{"2001:db8::1:7471", false, uverbs.ErrInvalid},    // IPv6 without brackets
		{"[2001:db8::1]:7471:1", true, uverbs.ErrInvalid}, // too many colons
		{"192.0.2.1:no-such-service", false, nil},         // an unknown service
		{"192.0.2.1:99999", true, nil},                    // a port out of range
	}
	for _, tt := range tests {
		var err error
		if tt.listen {
			var l *Listener
			l, err = Listen(tt.address)
			if err == nil {
				l.Close()
			}
		} else {
			var id *ID
			id, err = Dial(context.Background(), tt.address)
			if err == nil {
				id.Close()
			}
		}
		switch {
		case err == nil:
			t.Errorf("%q (listen %v): no error", tt.address, tt.listen)
		case tt.want != nil && !errors.Is(err, tt.want):
			t.Errorf("%q (listen %v): %v, want %v", tt.address, tt.listen, err, tt.want)
		case errors.Is(err, uverbs.ErrNoDevice) || errors.Is(err, errors.ErrUnsupported):
			t.Errorf("%q (listen %v): %v, want a failure before any device is opened", tt.address, tt.listen, err)
		}
	}
}

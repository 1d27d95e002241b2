package rpma

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestResolveAddress parses the addresses Dial and Listen take: IPv4 and
// IPv6 literals, names (through a table), and what is rejected before
// any device is looked at.
func TestResolveAddress(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Names resolve through a table: the test VM has no resolver.
	hosts := map[string][]netip.Addr{
		"kv.example":     {netip.MustParseAddr("192.0.2.7"), netip.MustParseAddr("2001:db8::7")},
		"mapped.example": {netip.MustParseAddr("::ffff:192.0.2.8")},
	}
	defer func(f func(context.Context, string, string) ([]netip.Addr, error)) { lookupNetIP = f }(lookupNetIP)
	lookupNetIP = func(_ context.Context, network, host string) ([]netip.Addr, error) {
		if a, ok := hosts[host]; ok && network == "ip" {
			return a, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	ap := netip.MustParseAddrPort
	for _, tt := range []struct {
		address string
		listen  bool
		want    []netip.AddrPort // nil: want is checked by wantErr
		wantErr error
	}{
		{address: "192.0.2.1:7204", want: []netip.AddrPort{ap("192.0.2.1:7204")}},
		{address: "[2001:db8::1]:7204", want: []netip.AddrPort{ap("[2001:db8::1]:7204")}},
		{address: "[fe80::1%veth0]:7204", want: []netip.AddrPort{ap("[fe80::1%veth0]:7204")}},
		{address: "[::ffff:192.0.2.1]:1", want: []netip.AddrPort{ap("192.0.2.1:1")}}, // IPv4-mapped: the IPv4 address
		{address: "kv.example:7204", want: []netip.AddrPort{ap("192.0.2.7:7204"), ap("[2001:db8::7]:7204")}},
		{address: "mapped.example:1", want: []netip.AddrPort{ap("192.0.2.8:1")}},
		{address: "192.0.2.1:0", listen: true, want: []netip.AddrPort{ap("192.0.2.1:0")}},
		{address: "192.0.2.1:0", wantErr: ErrInvalid}, // a dialer needs a port
		{address: ":7204", listen: true, wantErr: ErrInvalid},
		{address: ":7204", wantErr: ErrInvalid},
		{address: "192.0.2.1", wantErr: ErrInvalid},
		{address: "192.0.2.1:65536", wantErr: ErrInvalid},
		{address: "192.0.2.1:no-such-service", wantErr: ErrInvalid},
		{address: "2001:db8::1:7204", wantErr: ErrInvalid}, // IPv6 without brackets
		{address: "", wantErr: ErrInvalid},
		{address: "no-such-host.invalid:7204", wantErr: ErrProvider},
	} {
		name := tt.address
		if name == "" {
			name = "empty"
		}
		if tt.listen {
			name = "listen " + name
		}
		t.Run(name, func(t *testing.T) {
			got, err := resolveAddress(ctx, tt.address, tt.listen)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("got %v, %v; want an error matching %v", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); diff != "" {
				t.Errorf("addresses (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOneCallConfig checks what the zero options of Dial and Listen
// mean: librpma's defaults, with a CQ that has room for every send and
// receive that complete on it.
func TestOneCallConfig(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   ConnConfig
		want ConnConfig
	}{
		{"zero", ConnConfig{}, ConnConfig{Timeout: DefaultTimeout, CQSize: 20, SQSize: 10, RQSize: 10}},
		{"queues given", ConnConfig{SQSize: 4, RQSize: 3}, ConnConfig{Timeout: DefaultTimeout, CQSize: 7, SQSize: 4, RQSize: 3}},
		{"receive CQ of its own", ConnConfig{RCQSize: 5}, ConnConfig{Timeout: DefaultTimeout, CQSize: 10, RCQSize: 5, SQSize: 10, RQSize: 10}},
		{"CQ given", ConnConfig{CQSize: 3}, ConnConfig{Timeout: DefaultTimeout, CQSize: 3, SQSize: 10, RQSize: 10}},
		{"timeout given", ConnConfig{Timeout: time.Minute}, ConnConfig{Timeout: time.Minute, CQSize: 20, SQSize: 10, RQSize: 10}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := oneCallConfig(tt.in)
			got, err := c.orDefault()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got, cmp.AllowUnexported(ConnConfig{})); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
	// A negative size stays an error, as in a ConnConfig given to
	// NewConnRequest.
	c := oneCallConfig(ConnConfig{RQSize: -1})
	if _, err := c.orDefault(); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative RQSize: %v, want ErrInvalid", err)
	}
}

// TestOptionsBeforeDevice checks that Dial and Listen reject bad
// options and addresses before they look for a device, so that the
// errors are the same on a host without one.
func TestOptionsBeforeDevice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tt := range []struct {
		name string
		call func() error
	}{
		{"dial without a port", func() error { _, err := Dial(ctx, "192.0.2.1", nil); return err }},
		{"dial without a host", func() error { _, err := Dial(ctx, ":7204", &DialOptions{}); return err }},
		{"listen without a host", func() error { _, err := Listen(":7204", nil); return err }},
		{"listen with a negative region", func() error { _, err := Listen("192.0.2.1:0", &ListenOptions{Region: -1}); return err }},
		{"listen with a negative queue", func() error {
			_, err := Listen("192.0.2.1:0", &ListenOptions{Conn: ConnConfig{SQSize: -1}})
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, ErrInvalid) {
				t.Errorf("got %v, want ErrInvalid", err)
			}
		})
	}
}

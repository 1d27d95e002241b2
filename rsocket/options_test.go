package rsocket

import (
	"testing"
	"time"
)

// TestOptionsDefaults: the zero Options keep alive every DefaultKeepAlive,
// a negative KeepAlive turns keepalives off, and UserTimeout is off unless
// positive.
func TestOptionsDefaults(t *testing.T) {
	if DefaultKeepAlive != 15*time.Second {
		t.Errorf("DefaultKeepAlive %v, want 15s as net.Dialer's", DefaultKeepAlive)
	}
	cases := []struct {
		name            string
		o               Options
		ka, limit, tick time.Duration
	}{
		{"zero", Options{}, 15 * time.Second, 0, 0},
		{"keepalive off", Options{KeepAlive: -1}, 0, 0, 0},
		{"keepalive off, any negative", Options{KeepAlive: -time.Hour}, 0, 0, 0},
		{"keepalive set", Options{KeepAlive: 100 * time.Millisecond}, 100 * time.Millisecond, 0, 0},
		{"user timeout", Options{UserTimeout: 2 * time.Second}, 15 * time.Second, 2 * time.Second, 500 * time.Millisecond},
		{"short user timeout ticks at 10ms", Options{UserTimeout: 20 * time.Millisecond}, 15 * time.Second, 20 * time.Millisecond, 10 * time.Millisecond},
		{"negative user timeout is off", Options{UserTimeout: -time.Second, KeepAlive: -1}, 0, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if ka := tc.o.keepAlive(); ka != tc.ka {
				t.Errorf("keepAlive() = %v, want %v", ka, tc.ka)
			}
			limit, tick := tc.o.userTimeout()
			if limit != tc.limit || tick != tc.tick {
				t.Errorf("userTimeout() = %v, %v; want %v, %v", limit, tick, tc.limit, tc.tick)
			}
		})
	}
}

package rdmacm_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestQuickStart runs the quick start of README.md (writeTo, with the
// server of its example) on every device: the server must find the
// client's message in its buffer.
func TestQuickStart(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		tests := []struct {
			name string
			msg  string
		}{
			{"short", "hello over RDMA"},
			{"whole buffer", strings.Repeat("0123456789abcdef", 4096/16)}, // the size both sides register
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := quickStart(ctxT(t), netip.MustParseAddr(d.Addr), tt.msg)
				if err != nil {
					t.Fatal(err)
				}
				if got != tt.msg {
					t.Errorf("the server's buffer holds %q, want %q", got, tt.msg)
				}
			})
		}
	})
}

package rpma_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/purerdma/purerdma/rpma"
)

// TestPeerConfigFromDescriptor checks rpma_peer_cfg_from_descriptor: at
// least one byte, any non-zero first byte meaning direct write to PMem.
func TestPeerConfigFromDescriptor(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    rpma.PeerConfig
		wantErr error
	}{
		{"nil", nil, rpma.PeerConfig{}, rpma.ErrInvalid},
		{"empty", []byte{}, rpma.PeerConfig{}, rpma.ErrInvalid},
		{"0", []byte{0}, rpma.PeerConfig{}, nil},
		{"1", []byte{1}, rpma.PeerConfig{DirectWriteToPMem: true}, nil},
		{"any non-zero", []byte{0x80}, rpma.PeerConfig{DirectWriteToPMem: true}, nil},
		{"longer accepted", []byte{1, 0, 0, 0}, rpma.PeerConfig{DirectWriteToPMem: true}, nil},
		{"only the first byte counts", []byte{0, 1}, rpma.PeerConfig{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rpma.PeerConfigFromDescriptor(tt.in)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("PeerConfigFromDescriptor(% x) error = %v, want %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("PeerConfigFromDescriptor(% x) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// TestPeerConfigDescriptor checks rpma_peer_cfg_get_descriptor's one
// byte and the round trip through PeerConfigFromDescriptor.
func TestPeerConfigDescriptor(t *testing.T) {
	for _, tt := range []struct {
		cfg  rpma.PeerConfig
		want []byte
	}{
		{rpma.PeerConfig{}, []byte{0}},
		{rpma.PeerConfig{DirectWriteToPMem: true}, []byte{1}},
	} {
		got := tt.cfg.Descriptor()
		if !bytes.Equal(got, tt.want) || len(got) != rpma.PeerConfigDescriptorSize {
			t.Errorf("%+v.Descriptor() = % x, want % x (%d bytes)", tt.cfg, got, tt.want, rpma.PeerConfigDescriptorSize)
		}
		back, err := rpma.PeerConfigFromDescriptor(got)
		if err != nil || back != tt.cfg {
			t.Errorf("round trip of %+v = %+v, %v", tt.cfg, back, err)
		}
	}
}

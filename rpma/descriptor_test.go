package rpma

import (
	"bytes"
	"errors"
	"testing"
)

// desc builds an MR descriptor as rpma_mr_get_descriptor lays it out.
func desc(addr, size uint64, rkey uint32, usage byte, extra ...byte) []byte {
	var b []byte
	for i := 0; i < 8; i++ {
		b = append(b, byte(addr>>(8*i)))
	}
	for i := 0; i < 8; i++ {
		b = append(b, byte(size>>(8*i)))
	}
	for i := 0; i < 4; i++ {
		b = append(b, byte(rkey>>(8*i)))
	}
	return append(append(b, usage), extra...)
}

// TestRemoteMRFromDescriptor checks rpma_mr_remote_from_descriptor's
// rules: at least 21 bytes, more accepted, usage 0 invalid, every field
// little-endian.
func TestRemoteMRFromDescriptor(t *testing.T) {
	full := desc(0x0102030405060708, 0x1112131415161718, 0x21222324, byte(UsageReadSrc|UsageFlushTypeVisibility))
	tests := []struct {
		name    string
		in      []byte
		want    *RemoteMR
		wantErr error
	}{
		{"nil", nil, nil, ErrInvalid},
		{"empty", []byte{}, nil, ErrInvalid},
		{"one byte short", full[:DescriptorSize-1], nil, ErrInvalid},
		{"usage 0", desc(1, 2, 3, 0), nil, ErrInvalid},
		{"usage 0 and longer", desc(1, 2, 3, 0, 0xff), nil, ErrInvalid},
		{"exact", full, &RemoteMR{addr: 0x0102030405060708, size: 0x1112131415161718, rkey: 0x21222324, usage: UsageReadSrc | UsageFlushTypeVisibility}, nil},
		{"longer accepted", desc(0x10, 0x20, 0x30, byte(UsageWriteDst), 1, 2, 3), &RemoteMR{addr: 0x10, size: 0x20, rkey: 0x30, usage: UsageWriteDst}, nil},
		{"every usage bit", desc(0, 0, 0, 0xff), &RemoteMR{usage: 0xff}, nil},
		{"top bits", desc(1<<63, 1<<63|1, 1<<31, byte(UsageRecv)), &RemoteMR{addr: 1 << 63, size: 1<<63 | 1, rkey: 1 << 31, usage: UsageRecv}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := bytes.Clone(tt.in)
			got, err := RemoteMRFromDescriptor(in)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("RemoteMRFromDescriptor(% x) error = %v, want %v", tt.in, err, tt.wantErr)
			}
			if !bytes.Equal(in, tt.in) {
				t.Errorf("RemoteMRFromDescriptor changed its input: % x", in)
			}
			if tt.want == nil {
				if got != nil {
					t.Errorf("RemoteMRFromDescriptor(% x) = %+v with an error", tt.in, *got)
				}
				return
			}
			if *got != *tt.want {
				t.Errorf("RemoteMRFromDescriptor(% x) = %+v, want %+v", tt.in, *got, *tt.want)
			}
			if got.Len() != tt.want.size {
				t.Errorf("Len() = %d, want %d", got.Len(), tt.want.size)
			}
		})
	}
}

// TestRemoteMRFlushType checks rpma_mr_remote_get_flush_type: the usage
// masked to the two flush bits.
func TestRemoteMRFlushType(t *testing.T) {
	tests := []struct {
		usage Usage
		want  Usage
	}{
		{UsageReadSrc, 0},
		{UsageFlushTypeVisibility, UsageFlushTypeVisibility},
		{UsageFlushTypePersistent, UsageFlushTypePersistent},
		{UsageWriteDst | UsageFlushTypeVisibility | UsageFlushTypePersistent, UsageFlushTypeVisibility | UsageFlushTypePersistent},
		{0xff, UsageFlushTypeVisibility | UsageFlushTypePersistent},
	}
	for _, tt := range tests {
		r, err := RemoteMRFromDescriptor(desc(0, 64, 1, byte(tt.usage)))
		if err != nil {
			t.Fatalf("usage %#x: %v", uint8(tt.usage), err)
		}
		if got := r.FlushType(); got != tt.want {
			t.Errorf("usage %#x: FlushType() = %#x, want %#x", uint8(tt.usage), uint8(got), uint8(tt.want))
		}
	}
}

// TestRemoteMRRange checks the bounds the posting methods put on remote
// offsets.
func TestRemoteMRRange(t *testing.T) {
	r := &RemoteMR{addr: 0x1000, size: 64, rkey: 7, usage: UsageWriteDst}
	tests := []struct {
		off, n  int
		want    uint64
		wantErr error
	}{
		{0, 0, 0x1000, nil},
		{0, 64, 0x1000, nil},
		{8, 56, 0x1008, nil},
		{64, 0, 0x1040, nil},
		{0, 65, 0, ErrInvalid},
		{60, 8, 0, ErrInvalid},
		{-1, 1, 0, ErrInvalid},
		{0, -1, 0, ErrInvalid},
	}
	for _, tt := range tests {
		got, err := r.at(tt.off, tt.n)
		if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
			t.Errorf("at(%d, %d) error = %v, want %v", tt.off, tt.n, err, tt.wantErr)
			continue
		}
		if err == nil && got != tt.want {
			t.Errorf("at(%d, %d) = %#x, want %#x", tt.off, tt.n, got, tt.want)
		}
	}
}

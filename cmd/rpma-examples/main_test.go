package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestMain fails the binary if a run leaves RDMA objects or fds behind.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// desc is a 21-byte MR descriptor as librpma lays it out.
func desc() []byte {
	b := make([]byte, 21)
	binary.LittleEndian.PutUint64(b, 0x7f0011223000)
	binary.LittleEndian.PutUint64(b[8:], 1024)
	binary.LittleEndian.PutUint32(b[16:], 0xabcd)
	b[20] = 0x18
	return b
}

func TestCommonData(t *testing.T) {
	full := commonData{DataOffset: 0x0102, MRDescSize: 21, PcfgDescSize: 1}
	copy(full.Descriptors[:], append(desc(), 1))
	mrOnly := commonData{DataOffset: 8, MRDescSize: 21}
	copy(mrOnly.Descriptors[:], desc())
	tests := []struct {
		name    string
		data    commonData
		wire    []byte // nil: encode(data) must decode back to data
		wantErr bool
	}{
		{name: "mr and peer config", data: full},
		{name: "mr only", data: mrOnly},
		{name: "zero", data: commonData{}},
		{name: "padded by the transport", data: mrOnly, wire: append(mrOnly.encode(), make([]byte, 28)...)},
		{name: "short", wire: make([]byte, 27), wantErr: true},
		{name: "empty", wire: nil, data: commonData{MRDescSize: 0xff}, wantErr: true},
		{name: "sizes overflow", wire: append([]byte{0, 0, 20, 5}, make([]byte, 24)...), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wire := tt.wire
			if wire == nil && !tt.wantErr {
				wire = tt.data.encode()
				if len(wire) != 28 {
					t.Fatalf("encoded %d bytes, want 28", len(wire))
				}
			}
			got, err := decodeCommonData(wire)
			if tt.wantErr {
				if err == nil {
					t.Errorf("decode(%x) = %+v, want an error", wire, got)
				}
				return
			}
			if err != nil || got != tt.data {
				t.Errorf("decode = %+v, %v; want %+v", got, err, tt.data)
			}
		})
	}
}

func TestCommonDataLayout(t *testing.T) {
	d := commonData{DataOffset: 0x0102, MRDescSize: 21, PcfgDescSize: 1}
	d.Descriptors[0], d.Descriptors[23] = 0xaa, 0xbb
	want := make([]byte, 28)
	binary.NativeEndian.PutUint16(want, 0x0102)
	want[2], want[3], want[4], want[27] = 21, 1, 0xaa, 0xbb
	if got := d.encode(); !bytes.Equal(got, want) {
		t.Errorf("encode = %x, want %x", got, want)
	}
	got, err := decodeCommonData(want)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := got.peerConfig(); err != nil {
		t.Errorf("peer config: %v", err)
	}
}

func TestGlibcRand(t *testing.T) {
	// rand() after srand(seed) in glibc.
	for _, tt := range []struct{ seed, want uint32 }{
		{0, 1804289383}, {1, 1804289383}, {2, 1505335290}, {42, 71876166},
	} {
		if got := glibcRand(tt.seed); got != tt.want {
			t.Errorf("glibcRand(%d) = %d, want %d", tt.seed, got, tt.want)
		}
	}
}

func TestStrtoul(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    uint64
		wantErr bool
	}{
		{"42", 42, false}, {"  7x", 7, false}, {"abc", 0, false}, {"18446744073709551615", 1<<64 - 1, false},
		{"18446744073709551616", 0, true},
	} {
		got, err := strtoul(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("strtoul(%q) = %d, %v", tt.in, got, err)
		}
	}
}

func TestHello(t *testing.T) {
	b := make([]byte, helloTSize)
	writeHelloStr(b, 0)
	if got := cstr(b[helloStrOffset:]); got != "Hello world!" {
		t.Errorf("hello %q", got)
	}
	var out bytes.Buffer
	translate(&out, b)
	if got := cstr(b[helloStrOffset:]); got != "¡Hola Mundo!" || out.String() != "translating...\n" || binary.NativeEndian.Uint32(b) != 1 {
		t.Errorf("translated %q, printed %q", got, out.String())
	}
}

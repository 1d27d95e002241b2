//go:build linux

package netlink

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

func TestMessageMarshal(t *testing.T) {
	skipBigEndian(t)
	m := Message{
		Header: unix.NlMsghdr{Len: 999, Type: 0x1403, Flags: 5, Seq: 7, Pid: 9},
		Data:   []byte{1, 2, 3},
	}
	got, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		19, 0, 0, 0, 0x03, 0x14, 5, 0, 7, 0, 0, 0, 9, 0, 0, 0,
		1, 2, 3, 0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MarshalBinary (-want +got):\n%s", diff)
	}
}

func TestParseMessages(t *testing.T) {
	in := []Message{
		{Header: unix.NlMsghdr{Type: 1, Flags: unix.NLM_F_MULTI, Seq: 1, Pid: 2}, Data: []byte{1, 2, 3, 4, 5}},
		{Header: unix.NlMsghdr{Type: 2, Seq: 1, Pid: 2}},
		{Header: unix.NlMsghdr{Type: 3, Seq: 1, Pid: 2}, Data: []byte{9}},
	}
	var b []byte
	for i := range in {
		var err error
		if b, err = in[i].AppendBinary(b); err != nil {
			t.Fatal(err)
		}
		in[i].Header.Len = uint32(unix.SizeofNlMsghdr + len(in[i].Data))
	}
	// The last message may come without its padding.
	b = b[:len(b)-3]
	got, err := ParseMessages(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, got, cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) })); diff != "" {
		t.Errorf("ParseMessages (-want +got):\n%s", diff)
	}
}

func TestParseMessagesMalformed(t *testing.T) {
	skipBigEndian(t)
	hdr := func(n byte) []byte { return []byte{n, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0} }
	for _, tt := range []struct {
		name string
		b    []byte
	}{
		{"truncated header", hdr(16)[:10]},
		{"length below header", hdr(8)},
		{"length past end", hdr(20)},
		{"huge length", append([]byte{0xff, 0xff, 0xff, 0xff}, hdr(16)[4:]...)},
		{"second truncated", append(hdr(16), 1, 2, 3)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if msgs, err := ParseMessages(tt.b); err == nil {
				t.Fatalf("no error; got %d messages", len(msgs))
			}
		})
	}
}

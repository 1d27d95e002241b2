//go:build linux

package netlink

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// attr is one decoded attribute, flags included.
type attr struct {
	Type uint16
	Data []byte
}

// attrs decodes b flat, without looking into nested attributes.
func attrs(b []byte) ([]attr, error) {
	var as []attr
	d := NewAttributeDecoder(b)
	for d.Next() {
		as = append(as, attr{d.Type() | d.TypeFlags(), d.Bytes()})
	}
	return as, d.Err()
}

// FuzzAttributeRoundTrip decodes arbitrary bytes as attributes. When
// they decode, encoding them again gives the input padded to the
// alignment, which decodes to the same attributes: nothing is lost or
// invented on the way.
func FuzzAttributeRoundTrip(f *testing.F) {
	e := NewAttributeEncoder()
	e.String(1, "rxe0")
	e.Uint64(2|unix.NLA_F_NET_BYTEORDER, 1)
	e.Nested(3, func(e *AttributeEncoder) error { e.Uint8(1, 7); return nil })
	e.Flag(4)
	good, _ := e.Encode()
	f.Add(good)
	f.Add(good[:len(good)-3]) // the last padding missing
	f.Add([]byte{5, 0, 1, 0, 'x'})
	f.Add([]byte{3, 0, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		roundTrip(t, b, attrs, func(as []attr) ([]byte, error) {
			e := NewAttributeEncoder()
			for _, a := range as {
				e.Bytes(a.Type, a.Data)
			}
			return e.Encode()
		})
	})
}

// FuzzParseMessages splits arbitrary bytes into netlink messages. When
// they parse, marshalling them gives the input padded to the alignment,
// which parses to the same messages; every payload lies inside the input.
func FuzzParseMessages(f *testing.F) {
	f.Add(dgram(f, msg(100, unix.NLM_F_MULTI, 'a', 'b', 'c'), msg(unix.NLMSG_DONE, unix.NLM_F_MULTI, errcode(0)...)))
	f.Add(dgram(f, msg(unix.NLMSG_ERROR, 0, errcode(-int32(unix.EPERM), echo(16)...)...)))
	f.Add([]byte{17, 0, 0, 0, 3, 0, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 'x'}) // no padding at the end
	f.Add([]byte{15, 0, 0, 0, 3, 0, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		roundTrip(t, b, ParseMessages, func(msgs []Message) ([]byte, error) {
			var out []byte
			for _, m := range msgs {
				if int(m.Header.Len) != unix.SizeofNlMsghdr+len(m.Data) || cap(m.Data) != len(m.Data) {
					t.Fatalf("header length %d for %d bytes of payload (capacity %d)", m.Header.Len, len(m.Data), cap(m.Data))
				}
				var err error
				if out, err = m.AppendBinary(out); err != nil {
					return nil, err
				}
			}
			return out, nil
		})
	})
}

// roundTrip decodes b; when it decodes, encoding the result must give b
// padded to the alignment, and decoding that the same result again.
func roundTrip[T any](t *testing.T, b []byte, decode func([]byte) ([]T, error), encode func([]T) ([]byte, error)) {
	t.Helper()
	vs, err := decode(b)
	if err != nil {
		return
	}
	out, err := encode(vs)
	if err != nil {
		t.Fatalf("decoded input does not encode: %v", err)
	}
	if len(out) != align(len(b)) {
		t.Fatalf("%d bytes re-encode to %d", len(b), len(out))
	}
	again, err := decode(out)
	if err != nil {
		t.Fatalf("re-encoded input does not decode: %v", err)
	}
	if diff := cmp.Diff(vs, again); diff != "" {
		t.Fatalf("decode(encode(decode(b))) (-first +again):\n%s", diff)
	}
}

// FuzzExecute feeds a Conn up to three datagrams of arbitrary bytes as
// the kernel's answer to its first request. Whatever they hold, Execute
// returns: replies that belong to the request, are not control messages
// and are not flagged as parts of an interrupted dump, or an error; a
// kernel refusal is an *Error wrapping a nonzero errno.
func FuzzExecute(f *testing.F) {
	data := msg(100, unix.NLM_F_MULTI, 'a')
	done := msg(unix.NLMSG_DONE, unix.NLM_F_MULTI, errcode(0)...)
	ack := msg(unix.NLMSG_ERROR, unix.NLM_F_CAPPED, errcode(0, echo(16)...)...)
	stale := data
	stale.Header.Seq = 0
	refusal := msg(unix.NLMSG_ERROR, unix.NLM_F_ACK_TLVS|unix.NLM_F_CAPPED, errcode(-int32(unix.EEXIST), append(echo(16), extAckMsg("exists")...)...)...)
	f.Add(dgram(f, data, data), dgram(f, done), []byte(nil), true)
	f.Add(dgram(f, stale), dgram(f, data, done), dgram(f, ack), false)
	f.Add(dgram(f, refusal), []byte(nil), []byte(nil), false)
	f.Add(dgram(f, msg(unix.NLMSG_DONE, unix.NLM_F_MULTI|unix.NLM_F_DUMP_INTR, errcode(0)...)), []byte(nil), []byte(nil), true)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, []byte(nil), []byte(nil), false)
	f.Fuzz(func(t *testing.T, d1, d2, d3 []byte, dump bool) {
		w := &wire{dgram: [][]byte{d1, d2, d3}}
		c := NewConn(w, wirePID)
		var flags uint16
		if dump {
			flags = unix.NLM_F_DUMP
		}
		replies, err := c.Execute(Message{Header: unix.NlMsghdr{Type: 100, Flags: flags}})
		if err != nil {
			var ne *Error
			if errors.As(err, &ne) && (ne.Errno == 0 || !errors.Is(err, ne.Errno)) {
				t.Fatalf("kernel error %v with errno %d", err, ne.Errno)
			}
			return
		}
		for _, m := range replies {
			switch {
			case m.Header.Pid != wirePID || m.Header.Seq != 1:
				t.Fatalf("reply for port %d, sequence %d returned", m.Header.Pid, m.Header.Seq)
			case m.Header.Type == unix.NLMSG_NOOP || m.Header.Type == unix.NLMSG_ERROR ||
				m.Header.Type == unix.NLMSG_DONE || m.Header.Type == unix.NLMSG_OVERRUN:
				t.Fatalf("control message %d returned as a reply", m.Header.Type)
			case m.Header.Flags&unix.NLM_F_DUMP_INTR != 0:
				t.Fatal("a reply of an interrupted dump returned")
			}
		}
		if len(w.sent) != 1 || binary.NativeEndian.Uint32(w.sent[0][8:]) != 1 {
			t.Fatalf("sent %d requests", len(w.sent))
		}
	})
}

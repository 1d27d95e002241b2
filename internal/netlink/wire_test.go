//go:build linux

package netlink

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// wire is a Socket that replays datagrams exactly as a test writes them,
// for replies that the nltest fake would not produce.
type wire struct {
	sent  [][]byte
	dgram [][]byte
}

func (w *wire) Send(b []byte) error { w.sent = append(w.sent, b); return nil }
func (w *wire) Close() error        { return nil }
func (w *wire) Receive() ([]byte, error) {
	if len(w.dgram) == 0 {
		return nil, errors.New("wire: nothing to receive")
	}
	b := w.dgram[0]
	w.dgram = w.dgram[1:]
	return b, nil
}

const wirePID = 77

// msg is a reply to the first request (sequence 1) of a Conn on wirePID.
func msg(typ, flags uint16, data ...byte) Message {
	return Message{Header: unix.NlMsghdr{Type: typ, Flags: flags, Seq: 1, Pid: wirePID}, Data: data}
}

// dgram packs messages into one datagram.
func dgram(t testing.TB, msgs ...Message) []byte {
	t.Helper()
	var b []byte
	for _, m := range msgs {
		var err error
		if b, err = m.AppendBinary(b); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func errcode(code int32, rest ...byte) []byte {
	return append(binary.NativeEndian.AppendUint32(nil, uint32(code)), rest...)
}

// echo is a request header as the kernel echoes it in NLMSG_ERROR.
func echo(n uint32) []byte {
	b := binary.NativeEndian.AppendUint32(nil, n)
	b = binary.NativeEndian.AppendUint16(b, 100)
	b = binary.NativeEndian.AppendUint16(b, unix.NLM_F_REQUEST|unix.NLM_F_ACK)
	b = binary.NativeEndian.AppendUint32(b, 1)
	return binary.NativeEndian.AppendUint32(b, 0)
}

func extAckMsg(s string) []byte {
	e := NewAttributeEncoder()
	e.Uint32(unix.NLMSGERR_ATTR_OFFS, 20)
	e.String(unix.NLMSGERR_ATTR_MSG, s)
	b, _ := e.Encode()
	return b
}

func TestWire(t *testing.T) {
	data := func(s string) Message { return msg(100, unix.NLM_F_MULTI, []byte(s)...) }
	ack := msg(unix.NLMSG_ERROR, unix.NLM_F_CAPPED, errcode(0, echo(16)...)...)
	done := msg(unix.NLMSG_DONE, unix.NLM_F_MULTI, errcode(0)...)
	for _, tt := range []struct {
		name    string
		flags   uint16
		dgrams  func(t *testing.T) [][]byte
		want    []string // payloads of the replies
		wantErr string
	}{
		{
			name: "dump in several datagrams",
			dgrams: func(t *testing.T) [][]byte {
				return [][]byte{dgram(t, data("a"), data("b")), dgram(t, data("c")), dgram(t, done)}
			},
			flags: unix.NLM_F_DUMP,
			want:  []string{"a", "b", "c"},
		},
		{
			name: "dump and done in one datagram",
			dgrams: func(t *testing.T) [][]byte {
				return [][]byte{dgram(t, data("a"), data("b"), done)}
			},
			flags: unix.NLM_F_DUMP,
			want:  []string{"a", "b"},
		},
		{
			name: "done without a code, as old kernels send it",
			dgrams: func(t *testing.T) [][]byte {
				return [][]byte{dgram(t, data("a"), msg(unix.NLMSG_DONE, unix.NLM_F_MULTI))}
			},
			flags: unix.NLM_F_DUMP,
			want:  []string{"a"},
		},
		{
			name: "multipart answer to a request, then its ack",
			dgrams: func(t *testing.T) [][]byte {
				return [][]byte{dgram(t, data("a"), data("b"), done), dgram(t, ack)}
			},
			want: []string{"a", "b"},
		},
		{
			name: "noop skipped",
			dgrams: func(t *testing.T) [][]byte {
				return [][]byte{dgram(t, msg(unix.NLMSG_NOOP, 0), data("a"), ack)}
			},
			want: []string{"a"},
		},
		{
			name: "stale reply of an earlier request skipped",
			dgrams: func(t *testing.T) [][]byte {
				stale := data("old")
				stale.Header.Seq = 0
				return [][]byte{dgram(t, stale), dgram(t, data("a"), ack)}
			},
			want: []string{"a"},
		},
		{
			name: "uncapped error echoes the request",
			dgrams: func(t *testing.T) [][]byte {
				payload := append(echo(24), 1, 2, 3, 4, 5, 6, 7, 8)
				payload = append(payload, extAckMsg("bad thing")...)
				return [][]byte{dgram(t, msg(unix.NLMSG_ERROR, unix.NLM_F_ACK_TLVS, errcode(-int32(unix.EPERM), payload...)...))}
			},
			wantErr: "operation not permitted: bad thing",
		},
		{
			name: "capped error",
			dgrams: func(t *testing.T) [][]byte {
				payload := append(echo(24), extAckMsg("capped")...)
				return [][]byte{dgram(t, msg(unix.NLMSG_ERROR, unix.NLM_F_CAPPED|unix.NLM_F_ACK_TLVS, errcode(-int32(unix.ENODEV), payload...)...))}
			},
			wantErr: "no such device: capped",
		},
		{
			name: "error with a malformed extended ack keeps the errno",
			dgrams: func(t *testing.T) [][]byte {
				payload := append(echo(16), 0xff, 0xff, 1)
				return [][]byte{dgram(t, msg(unix.NLMSG_ERROR, unix.NLM_F_CAPPED|unix.NLM_F_ACK_TLVS, errcode(-int32(unix.ENOENT), payload...)...))}
			},
			wantErr: "no such file or directory",
		},
		{
			name: "error with a bogus echoed length keeps the errno",
			dgrams: func(t *testing.T) [][]byte {
				return [][]byte{dgram(t, msg(unix.NLMSG_ERROR, unix.NLM_F_ACK_TLVS, errcode(-int32(unix.ENOENT), echo(0xfffffff0)...)...))}
			},
			wantErr: "no such file or directory",
		},
		{
			name: "short error message",
			dgrams: func(t *testing.T) [][]byte {
				return [][]byte{dgram(t, msg(unix.NLMSG_ERROR, 0, 1, 2))}
			},
			wantErr: "too short",
		},
		{
			name: "dump ends with an error",
			dgrams: func(t *testing.T) [][]byte {
				return [][]byte{dgram(t, data("a"), msg(unix.NLMSG_DONE, unix.NLM_F_MULTI|unix.NLM_F_ACK_TLVS,
					errcode(-int32(unix.EMSGSIZE), extAckMsg("dump failed")...)...))}
			},
			flags:   unix.NLM_F_DUMP,
			wantErr: "message too long: dump failed",
		},
		{
			name: "dump interrupted",
			dgrams: func(t *testing.T) [][]byte {
				return [][]byte{dgram(t, data("a"), msg(100, unix.NLM_F_MULTI|unix.NLM_F_DUMP_INTR, 'b')), dgram(t, done)}
			},
			flags:   unix.NLM_F_DUMP,
			wantErr: "interrupted",
		},
		{
			name: "dump interrupted, said at the end",
			dgrams: func(t *testing.T) [][]byte {
				return [][]byte{dgram(t, data("a"), msg(unix.NLMSG_DONE, unix.NLM_F_MULTI|unix.NLM_F_DUMP_INTR, errcode(0)...))}
			},
			flags:   unix.NLM_F_DUMP,
			wantErr: "interrupted",
		},
		{
			name: "overrun",
			dgrams: func(t *testing.T) [][]byte {
				return [][]byte{dgram(t, msg(unix.NLMSG_OVERRUN, 0))}
			},
			wantErr: "OVERRUN",
		},
		{
			name: "reply from the future",
			dgrams: func(t *testing.T) [][]byte {
				m := data("a")
				m.Header.Seq = 2
				return [][]byte{dgram(t, m)}
			},
			wantErr: "sequence 2, want 1",
		},
		{
			name: "reply for another port",
			dgrams: func(t *testing.T) [][]byte {
				m := data("a")
				m.Header.Pid = 1
				return [][]byte{dgram(t, m)}
			},
			wantErr: "port 1, want 77",
		},
		{
			name: "truncated datagram",
			dgrams: func(t *testing.T) [][]byte {
				b := dgram(t, data("abcdef"))
				return [][]byte{b[:len(b)-8]}
			},
			wantErr: "message length",
		},
		{
			name:    "no end",
			dgrams:  func(t *testing.T) [][]byte { return [][]byte{dgram(t, data("a"))} },
			wantErr: "nothing to receive",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := &wire{dgram: tt.dgrams(t)}
			c := NewConn(w, wirePID)
			got, err := c.Execute(Message{Header: unix.NlMsghdr{Type: 100, Flags: tt.flags}})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var payloads []string
			for _, m := range got {
				payloads = append(payloads, string(m.Data))
			}
			if diff := cmp.Diff(tt.want, payloads); diff != "" {
				t.Errorf("replies (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWireErrno checks that the errno survives the trip through an
// NLMSG_ERROR for errors.Is.
func TestWireErrno(t *testing.T) {
	w := &wire{dgram: [][]byte{dgram(t, msg(unix.NLMSG_ERROR, unix.NLM_F_CAPPED, errcode(-int32(unix.EEXIST), echo(16)...)...))}}
	_, err := NewConn(w, wirePID).Execute(Message{Header: unix.NlMsghdr{Type: 100}})
	var nlErr *Error
	if !errors.As(err, &nlErr) || nlErr.Errno != unix.EEXIST || !errors.Is(err, unix.EEXIST) {
		t.Fatalf("error %#v, want *Error with EEXIST", err)
	}
}

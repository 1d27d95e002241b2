package rsocket

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// A connection request from rdma-core 44's rsocket on x86-64: version 1,
// RS_CONN_FLAG_IOMAP, 384 credits, no iomap, its target SGL of two
// entries and the first 64 KiB half of its 128 KiB receive buffer, all
// big-endian; padded to the 56 bytes of a RoCE request.
var cRequest = []byte{
	1, 2, 0x01, 0x80, 0, 0, 0, 0,
	0, 0, 0x55, 0x55, 0x55, 0x60, 0x10, 0x00, 0, 0, 0x12, 0x34, 0, 0, 0, 2,
	0, 0, 0x7f, 0xf0, 0x00, 0x00, 0x00, 0x00, 0, 0, 0x56, 0x78, 0, 1, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
}

func TestParseConnData(t *testing.T) {
	d, err := parseConnData(cRequest)
	if err != nil {
		t.Fatal(err)
	}
	want := connData{Version: 1, Flags: connFlagIOMap, Credits: 384,
		TargetSGL: sge{Addr: 0x555555601000, Key: 0x1234, Length: 2},
		DataBuf:   sge{Addr: 0x7ff000000000, Key: 0x5678, Length: 65536}}
	if d != want {
		t.Fatalf("parsed %+v, want %+v", d, want)
	}
	b := make([]byte, connDataLen)
	d.marshal(b)
	if !bytes.Equal(b, cRequest[:connDataLen]) {
		t.Fatalf("marshal: % x, want % x", b, cRequest[:connDataLen])
	}
	for _, bad := range []func(b []byte) []byte{
		func(b []byte) []byte { return b[:39] },
		func(b []byte) []byte { b[0] = 2; return b },
		func(b []byte) []byte { b[2], b[3] = 0, 0; return b },
		func(b []byte) []byte { b[23] = 0; return b },
		func(b []byte) []byte { b[36], b[37], b[38], b[39] = 0, 0, 0, 0; return b },
		func(b []byte) []byte { b[36] = 0x20; return b },
	} {
		if _, err := parseConnData(bad(bytes.Clone(cRequest))); !errors.Is(err, ErrProtocol) {
			t.Errorf("bad connection data accepted: %v", err)
		}
	}
}

// FuzzParseConnData: any bytes parse without panicking, and what parses
// marshals back to the same 40 bytes (the reserved ones zeroed).
func FuzzParseConnData(f *testing.F) {
	f.Add(cRequest)
	f.Add(cRequest[:connDataLen])
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parseConnData(b)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("error %v does not match ErrProtocol", err)
			}
			return
		}
		out := make([]byte, connDataLen)
		d.marshal(out)
		in := bytes.Clone(b[:connDataLen])
		in[4], in[5], in[6] = 0, 0, 0
		if !bytes.Equal(out, in) {
			t.Fatalf("round trip % x -> % x", in, out)
		}
	})
}

func TestMsg(t *testing.T) {
	for _, c := range []struct {
		op, data, msg uint32
	}{{opData, 5, 5}, {opSGL, 0x180, 0x80000180}, {opCtrl, ctrlShutdown, 0xE0000002}, {opIOMapSGL, 3, 0xC0000003}} {
		if m := msgSet(c.op, c.data); m != c.msg || msgOp(m) != c.op || msgData(m) != c.data {
			t.Errorf("msgSet(%d, %d) = %#x (op %d, data %d), want %#x", c.op, c.data, m, msgOp(m), msgData(m), c.msg)
		}
	}
}

// receiver is a connected stream with rq receives and a buffer of size
// bytes.
func receiver(rq, size int) *stream {
	s := newStream(16, rq, 1<<12, size, false)
	s.state = stConnected | stReadable | stWritable
	return &s
}

// FuzzApplyMsg feeds a stream of peer messages (immediate data, or the
// words of message mode) to the receive state, reading between them as an
// application would: a message is applied or refused with ErrProtocol,
// and the accounting of queued bytes never leaves the buffer.
func FuzzApplyMsg(f *testing.F) {
	f.Add([]byte{0, 0, 0x01, 0x00, 0x80, 0, 0x01, 0x80, 0xE0, 0, 0, 2, 0, 0, 0, 0})
	f.Add(binary.BigEndian.AppendUint32(nil, msgSet(opData, 1<<17)))
	f.Add(binary.BigEndian.AppendUint32(nil, msgSet(opCtrl, 9)))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := receiver(16, 1<<16)
		for len(b) >= 4 {
			m := binary.BigEndian.Uint32(b)
			b = b[4:]
			queued := c.rqueued
			if err := c.applyMsg(m); err != nil {
				if !errors.Is(err, ErrProtocol) {
					t.Fatalf("applyMsg(%#x): %v", m, err)
				}
				if c.rqueued != queued {
					t.Fatalf("refused message %#x changed the queue", m)
				}
				continue
			}
			if c.rqueued < 0 || c.rqueued > c.rbufSize {
				t.Fatalf("%d bytes queued in a %d-byte buffer", c.rqueued, c.rbufSize)
			}
			// Read one queued message, as Read does, in the pieces the
			// ring's end cuts it into.
			for seq := c.rseqNo; c.readable() && c.rseqNo == seq; {
				_, n := c.nextChunk(1 << 30)
				c.consume(n)
			}
		}
		sum := 0
		for i := c.rmsgHead; i != c.rmsgTail; i = next(i, len(c.rmsg)) {
			sum += int(c.rmsg[i])
		}
		if sum != c.rqueued {
			t.Fatalf("queue holds %d bytes, accounted %d", sum, c.rqueued)
		}
	})
}

package rsocket

import (
	"bytes"
	"errors"
	"testing"
)

// side is one end of a connection modelled without a device: the stream,
// its rings, the target SGL the peer writes (tbuf's entries) and the
// messages of its sends not yet completed, in posting order.
type side struct {
	s      stream
	sbuf   []byte
	rbuf   []byte
	target [sglSize]sge // Addr is an offset into the peer's rbuf
	flight []write      // writes posted, not yet arrived at the peer
	sent   []uint32     // completions to come, as sendDone gets them
}

// write is a data write in flight: the device reads the send ring when
// it sends, after the post, so the ring's bytes must stay until then.
type write struct {
	off1, n1, n2 int    // the send ring's pieces
	addr         uint64 // in the peer's rbuf
	m            uint32
}

// pair is a connection between two modelled sides, a writing and b
// reading, that carries data with the stream's own accounting: a write
// copies the bytes from a's send ring into b's receive buffer where a's
// target SGL says, and its message reaches b at once, as an RDMA write
// with immediate does; a credit update writes b's announcement into a's
// target SGL. wrote and read are what went in and came out.
type pair struct {
	a, b        *side
	wrote, read []byte
	checked     int // bytes of read already compared
}

func newSide(sq, rq, sbuf, rbuf int, msgMode bool) *side {
	s := &side{s: newStream(sq, rq, sbuf, rbuf, msgMode), sbuf: make([]byte, sbuf), rbuf: make([]byte, rbuf)}
	return s
}

// connect exchanges the connection data: each announces its credits and
// the first half of its receive buffer.
func connect(a, b *side) {
	for _, x := range []struct{ from, to *side }{{a, b}, {b, a}} {
		x.to.s.start(connData{Credits: uint16(x.from.s.rqSize), TargetSGL: sge{Length: sglSize}})
		x.to.target[0] = sge{Addr: 0, Length: uint32(x.from.s.rbufSize / 2)}
	}
}

// post records the completions a message's send gives: in message mode a
// write with a message (data, an announcement) is a write and a send,
// each freeing a slot; a message alone is one send.
func (x *side) post(m uint32, write bool) {
	x.sent = append(x.sent, m)
	if x.s.msgMode && write {
		x.sent = append(x.sent, msgSet(msgOp(m), 0))
	}
}

// write posts up to n bytes of data if the stream allows it, as Write
// and writeData do; it returns the bytes posted.
func (p *pair) write(n int, fill byte) int {
	a := p.a
	if n == 0 || !a.s.canSend(a.target[a.s.targetSGE].Length) {
		return 0
	}
	tg := &a.target[a.s.targetSGE]
	n = min(n, a.s.sbufAvail, int(tg.Length))
	data := make([]byte, n)
	for i := range data {
		data[i] = fill + byte(len(p.wrote)+i)
	}
	off1, n1, n2 := a.s.reserve(n)
	copy(a.sbuf[off1:off1+n1], data)
	copy(a.sbuf[:n2], data[n1:])
	a.flight = append(a.flight, write{off1, n1, n2, tg.Addr, msgSet(opData, uint32(n))})
	tg.Addr += uint64(n)
	tg.Length -= uint32(n)
	a.s.wroteTarget(tg.Length)
	p.wrote = append(p.wrote, data...)
	return n
}

// arrive carries a's oldest write to b: the device gathers the send
// ring's pieces into b's buffer and b gets the message; a's completion
// comes later.
func (p *pair) arrive(t *testing.T) {
	a, b := p.a, p.b
	if len(a.flight) == 0 {
		return
	}
	w := a.flight[0]
	a.flight = a.flight[1:]
	n := w.n1 + w.n2
	if int(w.addr)+n > len(b.rbuf) {
		t.Fatalf("write of %d bytes at %d overruns the peer's %d-byte buffer", n, w.addr, len(b.rbuf))
	}
	copy(b.rbuf[w.addr:], a.sbuf[w.off1:w.off1+w.n1])
	copy(b.rbuf[int(w.addr)+w.n1:], a.sbuf[:w.n2])
	if err := b.s.applyMsg(w.m); err != nil {
		t.Fatalf("the reader refuses %d bytes: %v", n, err)
	}
	a.post(w.m, true)
}

// readOut reads up to n bytes at b, as Read does.
func (p *pair) readOut(n int) {
	b := p.b
	for n > 0 {
		off, k := b.s.nextChunk(n)
		if k == 0 {
			return
		}
		p.read = append(p.read, b.rbuf[off:off+k]...)
		b.s.consume(k)
		n -= k
	}
}

// credits sends b's credit update when the stream says so, as process
// and Read do.
func (p *pair) credits(t *testing.T) {
	a, b := p.a, p.b
	if !b.s.giveCredits() {
		return
	}
	cr := b.s.takeCredits()
	if cr.announce {
		a.target[cr.remoteSGE] = sge{Addr: uint64(cr.bufOff), Length: uint32(b.s.rbufSize / 2)}
	}
	b.post(cr.msg, cr.announce)
	if err := a.s.applyMsg(cr.msg); err != nil {
		t.Fatalf("credits %#x refused: %v", cr.msg, err)
	}
}

// complete completes x's oldest send.
func (x *side) complete() {
	if len(x.sent) > 0 {
		x.s.sendDone(x.sent[0])
		x.sent = x.sent[1:]
	}
}

// check holds at every step: nothing read that was not written, in
// order; counters within their bounds.
func (p *pair) check(t *testing.T) {
	t.Helper()
	if !bytes.Equal(p.read[p.checked:], p.wrote[p.checked:len(p.read)]) {
		t.Fatalf("read bytes differ from the written ones after %d", p.checked)
	}
	p.checked = len(p.read)
	a, b := &p.a.s, &p.b.s
	for _, x := range []*stream{a, b} {
		if x.sqeAvail > x.sqSize-qpCtrlSize || x.ctrlMax-x.ctrlSeq > qpCtrlSize {
			t.Fatalf("more send slots free than the queue has: %d data, %d control", x.sqeAvail, x.ctrlMax-x.ctrlSeq)
		}
	}
	if a.sbufAvail < 0 || a.sbufAvail > a.sbufSize || a.sqeAvail < 0 || int32(a.ctrlMax-a.ctrlSeq) < 0 {
		t.Fatalf("writer: %d ring bytes free, %d send slots, control %d/%d", a.sbufAvail, a.sqeAvail, a.ctrlSeq, a.ctrlMax)
	}
	if b.rqueued < 0 || b.rqueued > b.rbufSize || int32(b.ctrlMax-b.ctrlSeq) < 0 {
		t.Fatalf("reader: %d bytes queued, control %d/%d", b.rqueued, b.ctrlSeq, b.ctrlMax)
	}
	if int(p.a.s.sseqNo-p.b.s.rseqNo) > p.b.s.rqSize {
		t.Fatalf("writer used %d sequence numbers ahead of the reader's %d receives", p.a.s.sseqNo-p.b.s.rseqNo, p.b.s.rqSize)
	}
}

// run drives the pair with ops: each byte picks an action and a size.
// At the end every send completes and the reader reads everything, and
// then the writer must be able to go on: credits never leak.
func (p *pair) run(t *testing.T, ops []byte, rounds int) {
	for i, op := range ops {
		size := int(op>>2)*331 + 1
		switch op & 3 {
		case 0:
			p.write(size, byte(i))
		case 1:
			p.readOut(size)
		case 2:
			p.arrive(t)
		case 3:
			p.a.complete()
			p.b.complete()
		}
		p.credits(t)
		p.check(t)
	}
	p.drain(t)
	// Then rounds more writes, each read at once, 1 and 1000 bytes in
	// turn: this stalls if credits, sequence numbers or buffer space
	// leak, even a byte a read (given more rounds than half the receive
	// buffer has bytes).
	for i := range rounds {
		if p.write(1+999*(i&1), 0) == 0 {
			t.Fatalf("the writer stalls at round %d with everything read and completed: %+v", i, p.a.s)
		}
		p.drain(t)
	}
}

// drain lets every write arrive and complete and the reader read all.
func (p *pair) drain(t *testing.T) {
	for range 4 {
		for len(p.a.flight)+len(p.a.sent)+len(p.b.sent) > 0 {
			p.arrive(t)
			p.a.complete()
			p.b.complete()
		}
		p.readOut(1 << 30)
		p.credits(t)
		p.check(t)
	}
	if len(p.read) != len(p.wrote) {
		t.Fatalf("read %d bytes of %d", len(p.read), len(p.wrote))
	}
}

// TestStreamPair carries data through two modelled sides, in both
// completion modes, with sizes that wrap the rings, and checks that
// nothing is lost, reordered or overrun and that credits come back.
func TestStreamPair(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sq, rq   int
		sbuf     int
		rbuf     int
		msgMode  bool
		ops      []byte
		minBytes int // written by the end, or the run did not exercise much
	}{
		{"write-with-imm, small buffers", 16, 16, 4096, 4096, false, bytes.Repeat([]byte{0x40, 0x41, 0x02, 0x03}, 200), 8192},
		{"message mode", 16, 16, 4096, 4096, true, bytes.Repeat([]byte{0x40, 0x41, 0x02, 0x03}, 200), 8192},
		{"sequence-bound: many 1-byte writes", 16, 16, 1 << 16, 1 << 16, false, bytes.Repeat([]byte{0x00, 0x00, 0x02, 0x01, 0x03}, 300), 300},
		{"writes in flight wrap the send ring", 16, 16, 5000, 4096, false,
			bytes.Repeat([]byte{0x0c, 0x0c, 0x0c, 0x0c, 0x02, 0x02, 0x02, 0x02, 0xfd, 0x03, 0x03, 0x03, 0x03}, 30), 8192},
		{"message mode, writes in flight", 16, 16, 6002, 4096, true,
			bytes.Repeat([]byte{0x0c, 0x0c, 0x0c, 0x02, 0x02, 0x02, 0xfd, 0x03, 0x03, 0x03}, 30), 8192},
		{"small writes outrun the receives", 16, 16, 4096, 4096, false, bytes.Repeat([]byte{0x00, 0x02, 0x03}, 60), 16},
		{"reader lags, then catches up", 16, 32, 8192, 8192, false, append(bytes.Repeat([]byte{0x10, 0x02}, 100), bytes.Repeat([]byte{0xfd, 0x03}, 100)...), 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &pair{a: newSide(tc.sq, tc.rq, tc.sbuf, tc.rbuf, tc.msgMode), b: newSide(tc.sq, tc.rq, tc.sbuf, tc.rbuf, tc.msgMode)}
			connect(p.a, p.b)
			p.run(t, tc.ops, 3000)
			if len(p.wrote) < tc.minBytes {
				t.Errorf("only %d bytes written, want at least %d", len(p.wrote), tc.minBytes)
			}
		})
	}
}

// FuzzStreamPair runs TestStreamPair's model on any sequence of actions.
func FuzzStreamPair(f *testing.F) {
	f.Add([]byte{0x40, 0x41, 0x02, 0x03}, false)
	f.Add([]byte{0xfc, 0xfc, 0xfd, 0x02, 0x03, 0x02}, true)
	f.Fuzz(func(t *testing.T, ops []byte, msgMode bool) {
		p := &pair{a: newSide(16, 16, 4096, 4096, msgMode), b: newSide(16, 16, 4096, 4096, msgMode)}
		connect(p.a, p.b)
		p.run(t, ops, 50)
	})
}

// TestTakeCredits pins the first credit updates of a fresh stream (16
// receives, an 8 KiB buffer): a half is announced while one is free,
// then only sequence credits go, and message mode takes a second control
// slot for each announcement.
func TestTakeCredits(t *testing.T) {
	for _, msgMode := range []bool{false, true} {
		s := newStream(16, 16, 4096, 8192, msgMode)
		s.start(connData{Credits: 16, TargetSGL: sge{Length: sglSize}})
		// The connection data announced rbuf[0:4096]; half is free.
		want := []struct {
			cr      credits
			ctrlSeq uint32
		}{
			{credits{msg: 0x80000010, announce: true, bufOff: 4096, slot: 1, remoteSGE: 1}, 1},
			{credits{msg: 0x80000010}, 2},
		}
		for i, w := range want {
			if !s.giveCredits() && i == 0 {
				t.Fatalf("msgMode %v: no credits on a fresh stream with half its buffer free", msgMode)
			}
			seq := s.rseqNo
			got := s.takeCredits()
			if s.rseqComp != seq+8 {
				t.Errorf("msgMode %v, update %d: next update at sequence %d, want half the queue on (%d)", msgMode, i, s.rseqComp, seq+8)
			}
			wantSeq := w.ctrlSeq
			if msgMode {
				wantSeq = []uint32{2, 3}[i]
				if w.cr.announce {
					w.cr.slot = 2
				}
			}
			if got != w.cr || s.ctrlSeq != wantSeq {
				t.Errorf("msgMode %v, update %d: %+v (control seq %d), want %+v (%d)", msgMode, i, got, s.ctrlSeq, w.cr, wantSeq)
			}
		}
		if s.rbufAvail != 0 || s.rbufFree != 0 || s.remoteSGE != 0 {
			t.Errorf("msgMode %v: after announcing: %d bytes unannounced, next half at %d, next entry %d; want 0, 0, 0",
				msgMode, s.rbufAvail, s.rbufFree, s.remoteSGE)
		}
	}
}

// TestApplyMsgRefusals checks that bad messages are ErrProtocol and
// change nothing queued.
func TestApplyMsgRefusals(t *testing.T) {
	for _, m := range []uint32{msgSet(opCtrl, 9), msgSet(opReserved, 0), msgSet(opDataMore, 1), msgSet(opData, 8193)} {
		s := newStream(16, 16, 4096, 8192, false)
		s.state = stConnected | stReadable | stWritable
		if err := s.applyMsg(m); !errors.Is(err, ErrProtocol) || s.rqueued != 0 {
			t.Errorf("applyMsg(%#x): %v, %d bytes queued; want ErrProtocol, 0", m, err, s.rqueued)
		}
	}
}

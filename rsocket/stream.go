package rsocket

import "fmt"

// stream is the protocol state of one connection, rsocket.c's counters
// without a device: the send ring's free space and offset, the peer's
// sequence credits and ours, the control slots, the halves of the receive
// buffer announced to the peer and the data messages not yet read. It
// decides; Conn posts the work requests, copies the bytes and waits. Host
// tests drive two streams against each other (stream_test.go) with no
// QP in between. Conn guards it with its mu.
type stream struct {
	// Sizes, fixed when the connection is made.
	sqSize, rqSize     int
	sbufSize, rbufSize int
	msgMode            bool // iWARP: a data write takes two send slots (write, then the message)

	state    int   // stConnected | stReadable | stWritable
	err      error // why the connection failed; nil for an orderly end
	holdSend bool  // iWARP passive side: send nothing before the peer did

	// Sending: free send slots and ring bytes, the ring's next free
	// byte, sequence numbers used and allowed, the peer's target SGL
	// entry written next.
	sqeAvail  int
	sbufAvail int
	sOff      int
	sseqNo    uint16
	sseqComp  uint16
	targetSGE int
	// Control messages: sequence of the last taken and the limit.
	ctrlSeq uint32
	ctrlMax uint32
	// The peer's target SGL (where our announcements of rbuf go) and its
	// entry written next.
	remoteSGL sge
	remoteSGE int

	// Receiving: sequence numbers consumed and the limit announced,
	// bytes of rbuf not announced, the half announced next, the next
	// byte to read, bytes queued; the sizes of the data messages not yet
	// read, a ring of rqSize+1.
	rseqNo    uint16
	rseqComp  uint16
	rbufAvail int
	rbufFree  int
	rbufOff   int
	rqueued   int
	rmsg      []uint32
	rmsgHead  int
	rmsgTail  int

	sendComps uint64 // send completions seen, for the user timeout
}

// Connection states, as rsocket.c's rs_connected/rs_readable/rs_writable.
const (
	stConnected = 1 << iota
	stReadable
	stWritable
)

// newStream is a stream before the peer's connection data (rs_alloc and
// rs_init_bufs): half the receive buffer and half the receive queue's
// sequence numbers are the first announcement's.
func newStream(sqSize, rqSize, sbufSize, rbufSize int, msgMode bool) stream {
	return stream{
		sqSize: sqSize, rqSize: rqSize, sbufSize: sbufSize, rbufSize: rbufSize, msgMode: msgMode,
		sqeAvail:  sqSize - qpCtrlSize,
		sbufAvail: sbufSize,
		ctrlMax:   qpCtrlSize,
		rbufFree:  rbufSize / 2,
		rbufAvail: rbufSize / 2,
		rseqComp:  uint16(rqSize / 2),
		rmsg:      make([]uint32, rqSize+1),
	}
}

// start takes in the peer's connection data (rs_save_conn_data): its
// target SGL, whose entry 0 the data buffer it announced fills, and its
// credits.
func (s *stream) start(d connData) {
	s.remoteSGL = d.TargetSGL
	s.remoteSGE = 1
	s.sseqComp = d.Credits
	s.state = stConnected | stReadable | stWritable
}

// fail records the first error and ends the connection's data transfer.
func (s *stream) fail(err error) {
	if s.err == nil {
		s.err = err
	}
	s.state = 0
}

func (s *stream) ctrlAvail() bool { return s.ctrlSeq != s.ctrlMax }
func (s *stream) ctrl2Avail() bool {
	return int32(s.ctrlSeq+1-s.ctrlMax) < 0
}

// giveCredits is rs_give_credits: half the receive buffer is free, or the
// peer has used half its sequence space, and a control slot is free.
func (s *stream) giveCredits() bool {
	if s.state&stConnected == 0 || s.holdSend {
		return false
	}
	if !(s.rbufAvail >= s.rbufSize/2 || int16(s.rseqNo-s.rseqComp) >= 0) {
		return false
	}
	if s.msgMode {
		return s.ctrl2Avail()
	}
	return s.ctrlAvail()
}

// credits is one credit update (rs_send_credits): the message, and when
// half the receive buffer is free, that half announced in the peer's
// target SGL.
type credits struct {
	msg       uint32 // opSGL with the new sequence limit
	announce  bool   // write an rs_sge of rbuf[bufOff:] first
	bufOff    int    // the half's offset in rbuf
	slot      int    // the control slot of sbuf that holds the rs_sge
	remoteSGE int    // the peer's target SGL entry it goes to
}

// takeCredits takes a control slot (two in message mode, when it
// announces) and accounts for the update it returns.
func (s *stream) takeCredits() credits {
	s.ctrlSeq++
	s.rseqComp = s.rseqNo + uint16(s.rqSize/2)
	cr := credits{msg: msgSet(opSGL, uint32(s.rseqNo)+uint32(s.rqSize))}
	if s.rbufAvail < s.rbufSize/2 {
		return cr
	}
	if s.msgMode {
		s.ctrlSeq++
	}
	cr.announce, cr.bufOff, cr.slot, cr.remoteSGE = true, s.rbufFree, int(s.ctrlSeq&(qpCtrlSize-1)), s.remoteSGE
	s.rbufAvail -= s.rbufSize / 2
	if s.rbufFree += s.rbufSize / 2; s.rbufFree >= s.rbufSize {
		s.rbufFree = 0
	}
	if s.remoteSGE++; s.remoteSGE == int(s.remoteSGL.Length) {
		s.remoteSGE = 0
	}
	return cr
}

// applyMsg applies a message from the peer to the receive state.
func (s *stream) applyMsg(m uint32) error {
	switch msgOp(m) {
	case opSGL:
		s.sseqComp = uint16(msgData(m))
	case opIOMapSGL, opWrite:
		// An iomap update or a direct write: rsocket.c ignores both here.
	case opCtrl:
		switch msgData(m) {
		case ctrlDisconnect:
			s.state &^= stConnected | stReadable | stWritable
		case ctrlShutdown:
			if s.state&stWritable != 0 {
				s.state &^= stReadable
			} else {
				s.state &^= stConnected | stReadable
			}
		case ctrlKeepalive:
		default:
			return fmtProtocol("control message %d", msgData(m))
		}
	case opData:
		n := int(msgData(m))
		if s.rqueued+n > s.rbufSize || next(s.rmsgTail, len(s.rmsg)) == s.rmsgHead {
			return fmtProtocol("%d bytes overrun the receive buffer", n)
		}
		if n == 0 {
			// Nothing to read, but it used a sequence number: count it
			// as consumed, or the peer's credits shrink for good.
			s.rseqNo++
			return nil
		}
		s.rmsg[s.rmsgTail] = uint32(n)
		s.rmsgTail = next(s.rmsgTail, len(s.rmsg))
		s.rqueued += n
	default:
		return fmtProtocol("operation %d", msgOp(m))
	}
	return nil
}

func next(i, n int) int {
	if i++; i == n {
		return 0
	}
	return i
}

// sendDone gives back what the send of message m held.
func (s *stream) sendDone(m uint32) {
	s.sendComps++
	switch msgOp(m) {
	case opSGL:
		s.ctrlMax++
	case opCtrl:
		s.ctrlMax++
		if msgData(m) == ctrlDisconnect {
			s.state &^= stConnected | stReadable | stWritable
		}
	case opIOMapSGL:
		s.sqeAvail++
	default:
		s.sqeAvail++
		s.sbufAvail += int(msgData(m))
	}
}

// sendsOutstanding says whether the send queue holds work not yet
// completed: its free control and data slots do not add up to its size.
func (s *stream) sendsOutstanding() bool {
	return int(s.ctrlMax-s.ctrlSeq)+s.sqeAvail != s.sqSize
}

// readable says whether data is queued to be read.
func (s *stream) readable() bool { return s.rmsgHead != s.rmsgTail }

// nextChunk returns where the next bytes to read lie in rbuf: at most
// limit of them, within one message and before the ring wraps; n is 0
// when nothing is queued.
func (s *stream) nextChunk(limit int) (off, n int) {
	if !s.readable() || limit <= 0 {
		return 0, 0
	}
	return s.rbufOff, min(int(s.rmsg[s.rmsgHead]), limit, s.rbufSize-s.rbufOff)
}

// consume marks the first n bytes of the chunk nextChunk returned as
// read; a message read to its end gives its sequence number back.
func (s *stream) consume(n int) {
	if s.rmsg[s.rmsgHead] -= uint32(n); s.rmsg[s.rmsgHead] == 0 {
		s.rseqNo++
		s.rmsgHead = next(s.rmsgHead, len(s.rmsg))
	}
	s.rqueued -= n
	s.rbufAvail += n
	if s.rbufOff += n; s.rbufOff == s.rbufSize {
		s.rbufOff = 0
	}
}

// canSend says whether a data write may go: send slots, sndLowat bytes of
// the ring, a sequence number, and room in the peer's current target
// buffer (targetLen, which the peer writes into our target SGL).
func (s *stream) canSend(targetLen uint32) bool {
	sqe := 1
	if s.msgMode {
		sqe = 2
	}
	return !s.holdSend && s.sqeAvail >= sqe && s.sbufAvail >= sndLowat && s.sseqNo != s.sseqComp && targetLen != 0
}

// reserve takes n bytes of the send ring, a sequence number and the send
// slots of one data write (rs_write_data's accounting). The bytes go at
// sbuf[off1:off1+n1], then, when the ring wraps, at sbuf[0:n2].
func (s *stream) reserve(n int) (off1, n1, n2 int) {
	off1, n1 = s.sOff, min(n, s.sbufSize-s.sOff)
	n2 = n - n1
	if s.sOff += n; s.sOff >= s.sbufSize {
		s.sOff -= s.sbufSize
	}
	s.sseqNo++
	s.sqeAvail--
	if s.msgMode {
		s.sqeAvail--
	}
	s.sbufAvail -= n
	return off1, n1, n2
}

// wroteTarget moves to the peer's next target buffer when the write of
// rest bytes left the current one full.
func (s *stream) wroteTarget(rest uint32) {
	if rest == 0 {
		s.targetSGE = next(s.targetSGE, sglSize)
	}
}

// fmtProtocol is the error of peer bytes that break the protocol.
func fmtProtocol(format string, args ...any) error {
	return fmt.Errorf("rsocket: "+format+": %w", append(args, ErrProtocol)...)
}

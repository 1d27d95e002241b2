package rsocket

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The constants below are rdma-core 44's librdmacm/rsocket.c: a Go peer
// must size and number things as the C library does, or the two misread
// each other's credits and buffers.
const (
	olapStart   = 2048   // RS_OLAP_START_SIZE: first transfer of a write
	maxTransfer = 65536  // RS_MAX_TRANSFER: largest single RDMA write
	sndLowat    = 2048   // RS_SNDLOWAT: send only with this much sbuf free
	qpMinSize   = 16     // RS_QP_MIN_SIZE
	qpMaxSize   = 0xFFFE // RS_QP_MAX_SIZE
	qpCtrlSize  = 4      // RS_QP_CTRL_SIZE: control messages in flight
	sglSize     = 2      // RS_SGL_SIZE: entries of the target SGL ring
	msgSize     = 4      // RS_MSG_SIZE: a message-mode receive
	sgeSize     = 16     // sizeof(struct rs_sge)
	connDataLen = 40     // sizeof(struct rs_conn_data)

	defInline = 64
	defSQSize = 384
	defRQSize = 384
	defMem    = 1 << 17
	defWMem   = 1 << 17
)

// Operations in the top three bits of a message (immediate data, or the
// 4-byte send of message mode).
const (
	opData      = 0 // RS_OP_DATA: bits 28-0 are the bytes written
	opDataMore  = 1 // reserved, never sent by rsocket.c
	opWrite     = 2 // RS_OP_WRITE: local only, never on the wire
	opDRAMore   = 3 // reserved
	opSGL       = 4 // RS_OP_SGL: bits 28-0 are the peer's new sequence limit
	opReserved  = 5
	opIOMapSGL  = 6 // RS_OP_IOMAP_SGL: bits 15-0 an iomap index
	opCtrl      = 7 // RS_OP_CTRL: bits 28-0 a ctrlDisconnect/Keepalive/Shutdown
	msgDataMask = 0x1FFFFFFF
)

// Control messages (RS_CTRL_*).
const (
	ctrlDisconnect = 0
	ctrlKeepalive  = 1
	ctrlShutdown   = 2
)

// Work request ID flags (RS_WR_ID_FLAG_*): the low 32 bits carry the message.
const (
	wrRecv    = uint64(1) << 63
	wrMsgSend = uint64(1) << 62
)

// Connection data flags.
const (
	connFlagNet   = 1 << 0 // RS_CONN_FLAG_NET: the sender is big-endian
	connFlagIOMap = 1 << 1 // RS_CONN_FLAG_IOMAP: an iomap follows the target SGL
)

func msgSet(op, data uint32) uint32 { return op<<29 | data&msgDataMask }
func msgOp(m uint32) uint32         { return m >> 29 }
func msgData(m uint32) uint32       { return m & msgDataMask }

// ErrProtocol matches the errors of peer bytes that break the rsocket
// protocol: bad connection data, an unknown operation, more data than the
// receive buffer holds.
var ErrProtocol = errors.New("protocol error")

// sge is struct rs_sge: a buffer of the peer's, addr/key/length.
type sge struct {
	Addr   uint64
	Key    uint32
	Length uint32
}

// connData is struct rs_conn_data, the private data of the connection
// request and reply. Its multi-byte fields travel big-endian.
type connData struct {
	Version         uint8
	Flags           uint8
	Credits         uint16 // the receive queue size: sends the peer may start
	TargetIOMapSize uint8  // log2 scale, 0 when there is no iomap
	TargetSGL       sge    // the ring the peer writes our next buffers into; Length counts entries
	DataBuf         sge    // the first half of our receive buffer
}

func (c *connData) marshal(b []byte) {
	_ = b[connDataLen-1]
	b[0], b[1] = c.Version, c.Flags
	binary.BigEndian.PutUint16(b[2:], c.Credits)
	b[4], b[5], b[6] = 0, 0, 0
	b[7] = c.TargetIOMapSize
	putSGEBig(b[8:], c.TargetSGL)
	putSGEBig(b[24:], c.DataBuf)
}

func putSGEBig(b []byte, s sge) {
	binary.BigEndian.PutUint64(b, s.Addr)
	binary.BigEndian.PutUint32(b[8:], s.Key)
	binary.BigEndian.PutUint32(b[12:], s.Length)
}

func getSGEBig(b []byte) sge {
	return sge{binary.BigEndian.Uint64(b), binary.BigEndian.Uint32(b[8:]), binary.BigEndian.Uint32(b[12:])}
}

// maxSGLEntries bounds the target SGL ring a peer may announce; rsocket.c
// announces RS_SGL_SIZE.
const maxSGLEntries = 1024

// parseConnData reads the peer's connection data from the private data of
// a request or reply (which the CM may pad with zeros) and checks it.
func parseConnData(b []byte) (connData, error) {
	var c connData
	if len(b) < connDataLen {
		return c, fmt.Errorf("rsocket: %d bytes of connection data, want %d: %w", len(b), connDataLen, ErrProtocol)
	}
	c.Version, c.Flags = b[0], b[1]
	c.Credits = binary.BigEndian.Uint16(b[2:])
	c.TargetIOMapSize = b[7]
	c.TargetSGL = getSGEBig(b[8:])
	c.DataBuf = getSGEBig(b[24:])
	switch {
	case c.Version != 1:
		return c, fmt.Errorf("rsocket: connection data version %d, want 1: %w", c.Version, ErrProtocol)
	case c.Credits == 0:
		return c, fmt.Errorf("rsocket: peer grants no credits: %w", ErrProtocol)
	case c.TargetSGL.Length == 0 || c.TargetSGL.Length > maxSGLEntries:
		return c, fmt.Errorf("rsocket: target SGL of %d entries: %w", c.TargetSGL.Length, ErrProtocol)
	case c.DataBuf.Length == 0 || c.DataBuf.Length > msgDataMask:
		return c, fmt.Errorf("rsocket: data buffer of %d bytes: %w", c.DataBuf.Length, ErrProtocol)
	}
	return c, nil
}

// putSGE writes s in the byte order of the peer: rsocket.c writes SGL
// updates in the receiver's order (RS_OPT_SWAP_SGL when the orders differ).
func putSGE(b []byte, s sge, order binary.ByteOrder) {
	order.PutUint64(b, s.Addr)
	order.PutUint32(b[8:], s.Key)
	order.PutUint32(b[12:], s.Length)
}

// hostBig reports whether this machine is big-endian (rs_host_is_net).
var hostBig = binary.NativeEndian.Uint16([]byte{0, 1}) == 1

package main

import (
	"bytes"
	"encoding/binary"
	"strconv"
)

// rdmaInfo is struct rping_rdma_info, the message of every SEND: a
// buffer's address, rkey and size, big-endian on the wire.
type rdmaInfo struct {
	buf  uint64
	rkey uint32
	size uint32
}

// infoSize is sizeof(struct rping_rdma_info).
const infoSize = 16

func (r rdmaInfo) encode(b []byte) {
	binary.BigEndian.PutUint64(b[0:], r.buf)
	binary.BigEndian.PutUint32(b[8:], r.rkey)
	binary.BigEndian.PutUint32(b[12:], r.size)
}

func decodeInfo(b []byte) rdmaInfo {
	return rdmaInfo{
		buf:  binary.BigEndian.Uint64(b[0:]),
		rkey: binary.BigEndian.Uint32(b[8:]),
		size: binary.BigEndian.Uint32(b[12:]),
	}
}

// msgFmt is RPING_MSG_FMT, "rdma-ping-%d: ".
const msgFmt = "rdma-ping-%d: "

// firstChar and lastChar bound rping's pattern: 'A' (65) to 'z' (122).
const firstChar, lastChar = 65, 122

// formatPing fills buf as rping_test_client does for ping number ping:
// "rdma-ping-<ping>: " then characters from start on, rising and wrapping
// from 'z' to 'A', and a NUL in the last byte. It returns the start of the
// next ping.
func formatPing(buf []byte, ping int, start byte) byte {
	// snprintf(start_buf, size, ...) writes at most size-1 characters;
	// the pattern starts where the whole text would have ended.
	msg := []byte("rdma-ping-" + strconv.Itoa(ping) + ": ")
	cc := len(msg)
	copy(buf[:max(len(buf)-1, 0)], msg)
	if cc < len(buf) {
		buf[cc] = 0
	}
	c := start
	for i := cc; i < len(buf); i++ {
		buf[i] = c
		c++
		if c > lastChar {
			c = firstChar
		}
	}
	start++
	if start > lastChar {
		start = firstChar
	}
	buf[len(buf)-1] = 0
	return start
}

// cString is what printf's %s prints of b: the bytes up to the first NUL.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// Package pingpong is what the Go ports of rdma-core's pingpong examples
// (ibv_rc_pingpong, ibv_ud_pingpong, ibv_srq_pingpong) have in common:
// the address exchange (the message each side writes over TCP, and the
// GID formats they print), the command line, the device set-up and the
// post/poll loop. The C tools are copies of one another in those parts,
// so one Go copy serves the three; each tool keeps what its transport
// does differently.
package pingpong

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/purerdma/purerdma/uverbs"
)

// Dest is a peer's address as the TCP exchange carries it (struct
// pingpong_dest).
type Dest struct {
	LID uint16
	QPN uint32
	PSN uint32
	GID uverbs.GID
}

// MsgSize is sizeof "0000:000000:000000:00000000000000000000000000000000":
// the message is written with its terminating NUL, always this long.
const MsgSize = 52

// DoneMsg is the final sync, also with its NUL.
const DoneMsg = "done\x00"

// Encode returns the message "%04x:%06x:%06x:%s" that ibv_rc_pingpong
// sends, padded with NULs to MsgSize bytes.
func (d Dest) Encode() []byte {
	s := fmt.Sprintf("%04x:%06x:%06x:%s", d.LID, d.QPN, d.PSN, WireGID(d.GID))
	b := make([]byte, MsgSize)
	copy(b, s)
	return b
}

// Decode parses a message as sscanf("%x:%x:%x:%s") and
// wire_gid_to_gid do, but strictly: three hex numbers and 32 hex digits.
func Decode(b []byte) (Dest, error) {
	s := string(b)
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	f := strings.Split(s, ":")
	if len(f) != 4 {
		return Dest{}, fmt.Errorf("bad address message %q", s)
	}
	var n [3]uint64
	for i, bits := range []int{16, 24, 24} {
		v, err := strconv.ParseUint(f[i], 16, bits)
		if err != nil {
			return Dest{}, fmt.Errorf("bad address message %q: %v", s, err)
		}
		n[i] = v
	}
	g, err := ParseWireGID(f[3])
	if err != nil {
		return Dest{}, fmt.Errorf("bad address message %q: %v", s, err)
	}
	return Dest{LID: uint16(n[0]), QPN: uint32(n[1]), PSN: uint32(n[2]), GID: g}, nil
}

// WireGID is gid_to_wire_gid: each 32-bit word of the GID, read in host
// order, goes through htobe32 and is printed with %08x. Whatever the host's
// byte order, that prints the GID's bytes in memory (network) order.
func WireGID(g uverbs.GID) string {
	var sb strings.Builder
	for i := 0; i < 4; i++ {
		fmt.Fprintf(&sb, "%08x", binary.BigEndian.Uint32(g[4*i:]))
	}
	return sb.String()
}

// ParseWireGID is wire_gid_to_gid: each group of 8 hex digits is a
// big-endian 32-bit word of the GID.
func ParseWireGID(s string) (uverbs.GID, error) {
	var g uverbs.GID
	if len(s) != 32 {
		return g, fmt.Errorf("GID %q is not 32 hex digits", s)
	}
	for i := 0; i < 4; i++ {
		v, err := strconv.ParseUint(s[8*i:8*i+8], 16, 32)
		if err != nil {
			return g, fmt.Errorf("GID %q: %v", s, err)
		}
		binary.BigEndian.PutUint32(g[4*i:], uint32(v))
	}
	return g, nil
}

// FormatGID prints g as glibc's inet_ntop(AF_INET6) does: the longest run
// (the first of equal ones) of two or more zero words becomes "::", and
// an IPv4-mapped or IPv4-compatible address ends in dotted decimal.
func FormatGID(g uverbs.GID) string {
	var w [8]int
	for i := range w {
		w[i] = int(binary.BigEndian.Uint16(g[2*i:]))
	}
	best, bestLen, cur, curLen := -1, 0, -1, 0
	for i := 0; i < 8; i++ {
		if w[i] == 0 {
			if cur == -1 {
				cur, curLen = i, 1
			} else {
				curLen++
			}
			if curLen > bestLen {
				best, bestLen = cur, curLen
			}
		} else {
			cur = -1
		}
	}
	if bestLen < 2 {
		best = -1
	}
	var sb strings.Builder
	for i := 0; i < 8; i++ {
		if best != -1 && i >= best && i < best+bestLen {
			if i == best {
				sb.WriteByte(':')
			}
			continue
		}
		if i != 0 {
			sb.WriteByte(':')
		}
		if i == 6 && best == 0 && (bestLen == 6 || (bestLen == 5 && w[5] == 0xffff)) {
			fmt.Fprintf(&sb, "%d.%d.%d.%d", g[12], g[13], g[14], g[15])
			break
		}
		fmt.Fprintf(&sb, "%x", w[i])
	}
	if best != -1 && best+bestLen == 8 {
		sb.WriteByte(':')
	}
	return sb.String()
}

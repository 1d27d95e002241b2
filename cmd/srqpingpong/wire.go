package main

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/purerdma/purerdma/uverbs"
)

// dest is a peer's address as the TCP exchange carries it (struct
// pingpong_dest).
type dest struct {
	lid uint16
	qpn uint32
	psn uint32
	gid uverbs.GID
}

// msgSize is sizeof "0000:000000:000000:00000000000000000000000000000000":
// the message is written with its terminating NUL, always this long.
const msgSize = 52

// doneMsg is the final sync, also with its NUL.
const doneMsg = "done\x00"

// encode returns the message "%04x:%06x:%06x:%s" that ibv_rc_pingpong
// sends, padded with NULs to msgSize bytes.
func (d dest) encode() []byte {
	s := fmt.Sprintf("%04x:%06x:%06x:%s", d.lid, d.qpn, d.psn, wireGID(d.gid))
	b := make([]byte, msgSize)
	copy(b, s)
	return b
}

// decodeDest parses a message as sscanf("%x:%x:%x:%s") and
// wire_gid_to_gid do, but strictly: three hex numbers and 32 hex digits.
func decodeDest(b []byte) (dest, error) {
	s := string(b)
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	f := strings.Split(s, ":")
	if len(f) != 4 {
		return dest{}, fmt.Errorf("bad address message %q", s)
	}
	var n [3]uint64
	for i, bits := range []int{16, 24, 24} {
		v, err := strconv.ParseUint(f[i], 16, bits)
		if err != nil {
			return dest{}, fmt.Errorf("bad address message %q: %v", s, err)
		}
		n[i] = v
	}
	g, err := parseWireGID(f[3])
	if err != nil {
		return dest{}, fmt.Errorf("bad address message %q: %v", s, err)
	}
	return dest{lid: uint16(n[0]), qpn: uint32(n[1]), psn: uint32(n[2]), gid: g}, nil
}

// wireGID is gid_to_wire_gid: each 32-bit word of the GID, read in host
// order, goes through htobe32 and is printed with %08x. Whatever the host's
// byte order, that prints the GID's bytes in memory (network) order.
func wireGID(g uverbs.GID) string {
	var sb strings.Builder
	for i := 0; i < 4; i++ {
		fmt.Fprintf(&sb, "%08x", binary.BigEndian.Uint32(g[4*i:]))
	}
	return sb.String()
}

// parseWireGID is wire_gid_to_gid: each group of 8 hex digits is a
// big-endian 32-bit word of the GID.
func parseWireGID(s string) (uverbs.GID, error) {
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

// formatGID prints g as glibc's inet_ntop(AF_INET6) does: the longest run
// (the first of equal ones) of two or more zero words becomes "::", and
// an IPv4-mapped or IPv4-compatible address ends in dotted decimal.
func formatGID(g uverbs.GID) string {
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

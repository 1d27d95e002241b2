package uverbs

import (
	"encoding/binary"
	"fmt"
	"syscall"
)

// GRHSize is the size of a global route header: the room a UD receive
// needs before its payload, where the device writes the received packet's
// GRH (on RoCE v2 over IPv4, 20 unused bytes and then the IPv4 header).
const GRHSize = 40

// WCAddr is what a receive work completion says about its sender: the
// part of a completion AHAttrFromWC reads (cq.WC.Addr returns it).
type WCAddr struct {
	SLID         uint16
	SL           uint8
	DLIDPathBits uint8
	GRH          bool // the completion's IBV_WC_GRH flag: grh holds the header
}

// AHAttrFromWC returns the address that replies to the sender of a received
// UD datagram, as ibv_init_ah_from_wc does: wc is the receive completion,
// grh the first GRHSize bytes of its buffer, port the local port it came in
// on. With a GRH the address is global: the sender's GID becomes the
// destination, and the local GID the datagram was sent to (its type, RoCE
// v2 for UDP or IPv4, IB/RoCE v1 otherwise, included) gives the source GID
// index. A GRH that is neither IPv6 nor IPv4 fails with EPROTONOSUPPORT, a
// multicast destination (which is in no GID table) with EINVAL, and a local
// GID not in the table with ErrNoGID, all wrapped.
func (c *Context) AHAttrFromWC(port uint8, wc WCAddr, grh []byte) (AHAttr, error) {
	// A closed context fails even where the answer needs no system call
	// (no GRH), as every other method does.
	if c == nil || c.core.Closed() {
		return AHAttr{}, ErrClosed
	}
	a := AHAttr{DLID: wc.SLID, SL: wc.SL, SrcPathBits: wc.DLIDPathBits, Port: port}
	if !wc.GRH {
		return a, nil
	}
	h, err := parseGRH(grh)
	if err != nil {
		return AHAttr{}, fmt.Errorf("uverbs: AH from work completion: %w", err)
	}
	ents, err := c.GIDTable(port)
	if err != nil {
		return AHAttr{}, fmt.Errorf("uverbs: AH from work completion: %w", err)
	}
	idx := -1
	for _, e := range ents {
		// The IB and RoCE v1 types are one in the table libibverbs
		// searches (sysfs's "IB/RoCE v1").
		if e.GID == h.local && (e.Type == GIDTypeRoCEv2) == (h.typ == GIDTypeRoCEv2) {
			idx = e.Index
			break
		}
	}
	if idx < 0 {
		return AHAttr{}, fmt.Errorf("uverbs: AH from work completion: local GID %v (%v) on port %d: %w", h.local, h.typ, port, ErrNoGID)
	}
	a.IsGlobal = true
	a.GRH = GlobalRoute{DGID: h.remote, SGIDIndex: uint8(idx), FlowLabel: h.flowLabel, HopLimit: h.hopLimit, TrafficClass: h.tclass}
	return a, nil
}

// grhInfo is what a received GRH says: the GIDs of both ends, the local
// one's type, and the route's traffic class, flow label and hop limit.
type grhInfo struct {
	local, remote GID
	typ           GIDType
	flowLabel     uint32
	hopLimit      uint8
	tclass        uint8
}

const (
	ipprotoUDP = 17
	ibNextHdr  = 0x1b // the next header of a RoCE v1 / IB GRH: the BTH
)

// parseGRH reads a received GRH as libibverbs does. On RoCE v2 over IPv4
// the 40 bytes hold 20 unused ones and then the IPv4 header; an IPv6
// version nibble does not rule that out, since the unused bytes are not
// always zero, so a well-formed IPv4 header (length 5 words, good
// checksum) in the second half wins.
func parseGRH(b []byte) (grhInfo, error) {
	if len(b) < GRHSize {
		return grhInfo{}, fmt.Errorf("GRH of %d bytes, want %d: %w", len(b), GRHSize, ErrInvalid)
	}
	vtf := binary.BigEndian.Uint32(b[0:4])
	ip4 := b[20:40]
	v4 := ip4[0]>>4 == 4
	if vtf>>28 == 6 {
		v4 = ip4[0]&0xf == 5 && ipv4Checksum(ip4) == binary.BigEndian.Uint16(ip4[10:12])
	} else if !v4 {
		return grhInfo{}, fmt.Errorf("GRH is neither IPv6 nor IPv4: %w", syscall.EPROTONOSUPPORT)
	}
	var h grhInfo
	h.flowLabel = vtf & 0xfffff
	if v4 {
		if ip4[16]&0xf0 == 0xe0 { // class D: a multicast destination
			return grhInfo{}, fmt.Errorf("multicast destination %d.%d.%d.%d: %w", ip4[16], ip4[17], ip4[18], ip4[19], ErrInvalid)
		}
		h.local = v4Mapped(ip4[16:20])
		h.remote = v4Mapped(ip4[12:16])
		h.typ = GIDTypeRoCEv2
		h.hopLimit = ip4[8]
		h.tclass = ip4[1]
		return h, nil
	}
	h.remote = GID(b[8:24])
	h.local = GID(b[24:40])
	if h.local[0] == 0xff {
		return grhInfo{}, fmt.Errorf("multicast destination %v: %w", h.local, ErrInvalid)
	}
	switch b[6] {
	case ipprotoUDP:
		h.typ = GIDTypeRoCEv2
	case ibNextHdr:
		h.typ = GIDTypeRoCEv1
	default:
		return grhInfo{}, fmt.Errorf("GRH next header %#x: %w", b[6], syscall.EPROTONOSUPPORT)
	}
	h.hopLimit = b[7]
	h.tclass = uint8(vtf >> 20)
	return h, nil
}

func v4Mapped(ip []byte) GID {
	var g GID
	g[10], g[11] = 0xff, 0xff
	copy(g[12:], ip)
	return g
}

// ipv4Checksum is the header checksum of a 20-byte IPv4 header, computed
// with its own checksum field taken as zero.
func ipv4Checksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i < 20; i += 2 {
		if i == 10 {
			continue
		}
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

package uverbs

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
)

// GID is a 128-bit global identifier, in network byte order. On RoCE it is
// an IPv6 address, or the IPv4-mapped form (::ffff:a.b.c.d) of an IPv4 one.
type GID [16]byte

// String returns the IPv6 text form, as net.IP prints it.
func (g GID) String() string { return net.IP(g[:]).String() }

// IsZero reports whether g is all zeros, the value of an empty entry.
func (g GID) IsZero() bool { return g == GID{} }

// GIDType says how a GID is used on the wire (enum ib_uverbs_gid_type).
type GIDType uint8

// GID types.
const (
	GIDTypeIB     GIDType = 0 // IB_UVERBS_GID_TYPE_IB
	GIDTypeRoCEv1 GIDType = 1 // IB_UVERBS_GID_TYPE_ROCE_V1
	GIDTypeRoCEv2 GIDType = 2 // IB_UVERBS_GID_TYPE_ROCE_V2
)

// String returns "IB", "RoCE v1" or "RoCE v2". The texts are our own,
// kept by hand (no C constant names): the kernel's sysfs gid_attrs/types
// says "IB/RoCE v1" for the first two and "RoCE v2".
func (t GIDType) String() string {
	switch t {
	case GIDTypeIB:
		return "IB"
	case GIDTypeRoCEv1:
		return "RoCE v1"
	case GIDTypeRoCEv2:
		return "RoCE v2"
	}
	return fmt.Sprintf("GIDType(%d)", uint8(t))
}

// GIDEntry is one valid entry of a port's GID table (ibv_gid_entry).
type GIDEntry struct {
	GID     GID
	Index   int // the entry's index in the table: the sgid_index of an address
	Port    uint8
	Type    GIDType
	Ifindex int // of the network device the entry belongs to, 0 if none
}

// gidEntrySize is sizeof(struct ib_uverbs_gid_entry).
const gidEntrySize = 32

// maxGIDEntries is as many entries as an ioctl attribute (16-bit length)
// can carry.
const maxGIDEntries = 0xffff / gidEntrySize

// GIDTable returns the valid (non-empty) entries of port's GID table, in
// index order, as ibv_query_gid_table does for one port. It uses
// UVERBS_METHOD_QUERY_GID_TABLE and falls back to sysfs on kernels without
// it.
//
// The kernel's GID table query covers InfiniBand and RoCE ports only, so
// for an iWARP device (siw) the table is read from sysfs: it holds a single
// entry, derived from the MAC address, which is not an IP address. iWARP
// connections are addressed by IP through the connection manager, not by
// GID, and GIDIndex finds nothing there (ErrNoGID).
func (c *Context) GIDTable(port uint8) ([]GIDEntry, error) {
	if c == nil {
		return nil, ErrClosed
	}
	if c.dev.NodeType == NodeRNIC {
		return c.sysfsGIDTable(port)
	}
	ents, err := c.queryGIDTable(port)
	if errors.Is(err, syscall.ENOTTY) || errors.Is(err, syscall.EPROTONOSUPPORT) || errors.Is(err, syscall.EOPNOTSUPP) {
		return c.sysfsGIDTable(port)
	}
	return ents, err
}

func (c *Context) sysfsGIDTable(port uint8) ([]GIDEntry, error) {
	if c.core.Closed() {
		return nil, ErrClosed
	}
	return sysfsGIDTable(sysfsRoot, c.dev.Name, port)
}

// queryGIDTable runs UVERBS_METHOD_QUERY_GID_TABLE. The kernel returns the
// entries of every port of the device and fails with EINVAL if they do not
// fit, so the buffer is sized for all ports and the result filtered.
func (c *Context) queryGIDTable(port uint8) ([]GIDEntry, error) {
	attr, err := c.QueryDevice()
	if err != nil {
		return nil, fmt.Errorf("uverbs: GID table of port %d: %w", port, err)
	}
	if port < 1 || port > attr.PhysPortCnt {
		return nil, fmt.Errorf("uverbs: GID table of port %d: %s has ports 1-%d: %w", port, c.dev.Name, attr.PhysPortCnt, ErrInvalid)
	}
	total := 0
	for p := uint8(1); p <= attr.PhysPortCnt; p++ {
		pa, err := c.QueryPort(p)
		if err != nil {
			return nil, fmt.Errorf("uverbs: GID table of port %d: %w", port, err)
		}
		total += pa.GIDTblLen
	}
	total = min(total, maxGIDEntries)

	buf := make([]byte, total*gidEntrySize)
	var n uint64
	m := ucmd.NewMethod(abi.UVERBS_OBJECT_DEVICE, abi.UVERBS_METHOD_QUERY_GID_TABLE)
	m.Const(abi.UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE, gidEntrySize)
	m.Const(abi.UVERBS_ATTR_QUERY_GID_TABLE_FLAGS, 0)
	m.Out(abi.UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES, buf)
	m.Out(abi.UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES, ucmd.Bytes(&n))
	if err := c.run(m); err != nil {
		return nil, fmt.Errorf("uverbs: GID table of port %d: %w", port, err)
	}
	if n > uint64(total) {
		return nil, fmt.Errorf("uverbs: GID table of port %d: kernel returned %d entries for a buffer of %d", port, n, total)
	}
	var ents []GIDEntry
	for i := range int(n) {
		var e abi.GIDEntry
		copy(ucmd.Bytes(&e), buf[i*gidEntrySize:])
		if e.PortNum != uint32(port) {
			continue
		}
		ents = append(ents, GIDEntry{
			GID:     GID(e.GID),
			Index:   int(e.GIDIndex),
			Port:    uint8(e.PortNum),
			Type:    GIDType(e.GIDType),
			Ifindex: int(e.NetdevIfindex),
		})
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Index < ents[j].Index })
	return ents, nil
}

// sysfsGIDTable reads the GID table of port of device dev from
// <root>/class/infiniband/<dev>/ports/<port>: gids/N,
// gid_attrs/types/N and gid_attrs/ndevs/N. Reading the type of an empty
// entry fails with EINVAL; such entries, and zero GIDs, are left out. A
// network device that cannot be found here (another namespace) gives
// Ifindex 0. root is "/sys" except in tests.
func sysfsGIDTable(root, dev string, port uint8) ([]GIDEntry, error) {
	dir := filepath.Join(root, "class", "infiniband", dev, "ports", strconv.Itoa(int(port)))
	files, err := os.ReadDir(filepath.Join(dir, "gids"))
	if errors.Is(err, fs.ErrNotExist) {
		// The device is there (Open found it), so the port is not.
		err = fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err != nil {
		return nil, fmt.Errorf("uverbs: GID table of %s port %d: %w", dev, port, err)
	}
	var idx []int
	for _, f := range files {
		if i, err := strconv.Atoi(f.Name()); err == nil && i >= 0 {
			idx = append(idx, i)
		}
	}
	sort.Ints(idx)

	roce := (&sysfsReader{dir: dir}).optional("link_layer") == "Ethernet"
	if devAttr := (&sysfsReader{dir: filepath.Join(dir, "..", "..")}); devAttr.uint("node_type") == uint64(NodeRNIC) {
		roce = false
	}

	var ents []GIDEntry
	for _, i := range idx {
		name := strconv.Itoa(i)
		r := sysfsReader{dir: filepath.Join(dir, "gids")}
		s := r.string(name)
		if r.err != nil {
			if errors.Is(r.err, syscall.EINVAL) {
				continue
			}
			return nil, fmt.Errorf("uverbs: GID table of %s port %d: %w", dev, port, r.err)
		}
		ip := net.ParseIP(s)
		if ip == nil {
			return nil, fmt.Errorf("uverbs: GID table of %s port %d: gids/%s: bad GID %q", dev, port, name, s)
		}
		g := GID(ip.To16())
		if g.IsZero() {
			continue
		}

		r.dir = filepath.Join(dir, "gid_attrs", "types")
		typ := r.string(name)
		switch {
		case errors.Is(r.err, syscall.EINVAL):
			continue // an empty entry
		case errors.Is(r.err, os.ErrNotExist):
			typ = "IB/RoCE v1" // a kernel without gid_attrs
		case r.err != nil:
			return nil, fmt.Errorf("uverbs: GID table of %s port %d: %w", dev, port, r.err)
		}
		e := GIDEntry{GID: g, Index: i, Port: port}
		switch typ {
		case "IB/RoCE v1":
			// sysfs does not tell IB from RoCE v1; as in rdma-core, the
			// link layer does (iWARP ports say Ethernet but are not RoCE).
			if roce {
				e.Type = GIDTypeRoCEv1
			}
		case "RoCE v2":
			e.Type = GIDTypeRoCEv2
		default:
			return nil, fmt.Errorf("uverbs: GID table of %s port %d: gid_attrs/types/%s: unknown type %q", dev, port, name, typ)
		}
		if ndev := (&sysfsReader{dir: filepath.Join(dir, "gid_attrs", "ndevs")}).optional(name); ndev != "" {
			if ifi, err := net.InterfaceByName(ndev); err == nil {
				e.Ifindex = ifi.Index
			}
		}
		ents = append(ents, e)
	}
	return ents, nil
}

// GIDIndex returns the index of port's RoCE v2 GID for addr: for an IPv4
// address the entry holding its IPv4-mapped form (::ffff:a.b.c.d), for an
// IPv6 address the entry equal to it. This is the sgid_index to use for
// traffic from addr. The error wraps ErrNoGID when there is no such entry,
// which is always the case on iWARP devices (siw), whose only GID is made
// from the MAC address: iWARP does not address by GID.
func (c *Context) GIDIndex(port uint8, addr netip.Addr) (int, error) {
	if c == nil {
		return -1, ErrClosed
	}
	if c.core.Closed() {
		return -1, ErrClosed
	}
	if !addr.IsValid() {
		return -1, fmt.Errorf("uverbs: GID index on port %d: invalid address: %w", port, ErrInvalid)
	}
	ents, err := c.GIDTable(port)
	if err != nil {
		return -1, err
	}
	if i := roceV2Index(ents, addr); i >= 0 {
		return i, nil
	}
	return -1, fmt.Errorf("uverbs: %s port %d: no RoCE v2 GID for %s: %w", c.dev.Name, port, addr, ErrNoGID)
}

// roceV2Index returns the index of the RoCE v2 entry for addr, or -1.
func roceV2Index(ents []GIDEntry, addr netip.Addr) int {
	want := GID(addr.As16()) // IPv4 addresses come out IPv4-mapped
	for _, e := range ents {
		if e.Type == GIDTypeRoCEv2 && e.GID == want {
			return e.Index
		}
	}
	return -1
}

package uverbs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
)

// DeviceAttr is what QueryDevice reports: ibv_device_attr.
type DeviceAttr struct {
	FWVer           string // "major.minor.sub", as libibverbs formats it
	NodeGUID        GUID
	SysImageGUID    GUID
	MaxMRSize       uint64
	PageSizeCap     uint64
	VendorID        uint32
	VendorPartID    uint32
	HWVer           uint32
	MaxQP           int
	MaxQPWR         int
	DeviceCapFlags  DeviceCap // extended bits included
	MaxSGE          int
	MaxSGERD        int
	MaxCQ           int
	MaxCQE          int
	MaxMR           int
	MaxPD           int
	MaxQPRdAtom     int
	MaxResRdAtom    int
	MaxQPInitRdAtom int
	AtomicCap       AtomicCap
	MaxMW           int
	MaxMcastGrp     int
	MaxAH           int
	MaxSRQ          int
	MaxSRQWR        int
	MaxSRQSGE       int
	MaxPKeys        int
	LocalCAAckDelay uint8
	PhysPortCnt     uint8
	// ODP is the device's on-demand paging support: ODPSupport in
	// ODPGeneralCaps, and per operation for RC QPs in ODPRCCaps
	// (ODPSend, ODPRecv, ODPWrite, ODPRead, ODPAtomic, ODPSRQRecv).
	ODPGeneralCaps ODPGeneral
	ODPRCCaps      ODPTransport
	ODPUCCaps      ODPTransport // as ODPRCCaps, for UC QPs
	ODPUDCaps      ODPTransport // as ODPRCCaps, for UD QPs
	ODPXRCCaps     ODPTransport // as ODPRCCaps, for XRC QPs

	// Limits of features the kernel reports but this package does not
	// implement (end-to-end contexts, reliable datagram domains, raw QPs,
	// FMRs): zero on rxe and siw, kept so that tools can print them.
	MaxEERdAtom           int
	MaxEEInitRdAtom       int
	MaxEE                 int
	MaxRDD                int
	MaxRawIPv6QP          int
	MaxRawEthyQP          int
	MaxMcastQPAttach      int // QPs per multicast group
	MaxTotalMcastQPAttach int // QP attachments over all groups
	MaxFMR                int
	MaxMapPerFMR          int

	// Extended attributes of EX_QUERY_DEVICE; a kernel that predates one
	// leaves it zero.
	CompletionTimestampMask    uint64
	HCACoreClock               uint64 // kHz
	RawPacketCaps              RawPacketCap
	RSSSupportedQPTs           uint32 // bit 1<<qp type per type RSS works on
	MaxRWQIndirectionTables    int
	MaxRWQIndirectionTableSize int
	MaxWQTypeRQ                int
	TMMaxRndvHdrSize           uint32 // tag matching; TMMaxNumTags 0 when unsupported
	TMMaxNumTags               uint32
	TMFlags                    uint32
	TMMaxOps                   uint32
	TMMaxSGE                   uint32
	MaxCQModerationCount       uint16
	MaxCQModerationPeriod      uint16 // microseconds
	MaxDMSize                  uint64 // device memory, bytes
}

// FlushTypes returns the RDMA FLUSH types the device does (WRFlush): none
// before Linux 6.2 or on siw, both on rxe since 6.2.
func (a *DeviceAttr) FlushTypes() FlushType { return flushTypes(a.DeviceCapFlags) }

// AtomicWrite reports whether the device does RDMA ATOMIC WRITE
// (WRAtomicWrite): rxe since Linux 6.2.
func (a *DeviceAttr) AtomicWrite() bool { return a.DeviceCapFlags&DeviceAtomicWrite != 0 }

func flushTypes(caps DeviceCap) FlushType {
	var t FlushType
	if caps&DeviceFlushGlobal != 0 {
		t |= FlushGlobal
	}
	if caps&DeviceFlushPersistent != 0 {
		t |= FlushPersistent
	}
	return t
}

// AtomicCap says whether and how a device does atomic operations.
type AtomicCap uint32

// Atomic capabilities (enum ibv_atomic_cap).
const (
	AtomicNone AtomicCap = 0 // IB_ATOMIC_NONE
	AtomicHCA  AtomicCap = 1 // IB_ATOMIC_HCA
	AtomicGlob AtomicCap = 2 // IB_ATOMIC_GLOB
)

// QueryDevice returns the device's attributes, as ibv_query_device_ex does
// (the extended query, so that the 64-bit capability flags are complete).
func (c *Context) QueryDevice() (DeviceAttr, error) {
	if c == nil {
		return DeviceAttr{}, ErrClosed
	}
	var (
		req  abi.ExQueryDevice
		resp abi.ExQueryDeviceResp
	)
	cmd := ucmd.Cmd{
		Num:  abi.IB_USER_VERBS_EX_CMD_QUERY_DEVICE,
		Ex:   true,
		Req:  ucmd.Bytes(&req),
		Resp: ucmd.Bytes(&resp),
	}
	if err := c.do(&cmd); err != nil {
		return DeviceAttr{}, err
	}
	b := &resp.Base
	// The extended flags are a superset of the legacy 32 bits; a kernel
	// that predates them leaves them zero.
	caps := uint64(b.DeviceCapFlags) | resp.DeviceCapFlagsEx
	return DeviceAttr{
		FWVer:           fmt.Sprintf("%d.%d.%d", uint16(b.FwVer>>32), uint16(b.FwVer>>16), uint16(b.FwVer)),
		NodeGUID:        guidFromBE(b.NodeGUID),
		SysImageGUID:    guidFromBE(b.SysImageGUID),
		MaxMRSize:       b.MaxMRSize,
		PageSizeCap:     b.PageSizeCap,
		VendorID:        b.VendorID,
		VendorPartID:    b.VendorPartID,
		HWVer:           b.HwVer,
		MaxQP:           int(b.MaxQP),
		MaxQPWR:         int(b.MaxQPWr),
		DeviceCapFlags:  DeviceCap(caps),
		MaxSGE:          int(b.MaxSGE),
		MaxSGERD:        int(b.MaxSGERd),
		MaxCQ:           int(b.MaxCQ),
		MaxCQE:          int(b.MaxCQE),
		MaxMR:           int(b.MaxMR),
		MaxPD:           int(b.MaxPD),
		MaxQPRdAtom:     int(b.MaxQPRdAtom),
		MaxResRdAtom:    int(b.MaxResRdAtom),
		MaxQPInitRdAtom: int(b.MaxQPInitRdAtom),
		AtomicCap:       AtomicCap(b.AtomicCap),
		MaxMW:           int(b.MaxMW),
		MaxMcastGrp:     int(b.MaxMcastGrp),
		MaxAH:           int(b.MaxAH),
		MaxSRQ:          int(b.MaxSRQ),
		MaxSRQWR:        int(b.MaxSRQWr),
		MaxSRQSGE:       int(b.MaxSRQSGE),
		MaxPKeys:        int(b.MaxPKeys),
		LocalCAAckDelay: b.LocalCAAckDelay,
		PhysPortCnt:     b.PhysPortCnt,
		ODPGeneralCaps:  ODPGeneral(resp.ODPCaps.GeneralCaps),
		ODPRCCaps:       ODPTransport(resp.ODPCaps.RCODPCaps),
		ODPUCCaps:       ODPTransport(resp.ODPCaps.UCODPCaps),
		ODPUDCaps:       ODPTransport(resp.ODPCaps.UDODPCaps),
		ODPXRCCaps:      ODPTransport(resp.XRCODPCaps),

		MaxEERdAtom:           int(b.MaxEERdAtom),
		MaxEEInitRdAtom:       int(b.MaxEEInitRdAtom),
		MaxEE:                 int(b.MaxEE),
		MaxRDD:                int(b.MaxRDD),
		MaxRawIPv6QP:          int(b.MaxRawIPv6QP),
		MaxRawEthyQP:          int(b.MaxRawEthyQP),
		MaxMcastQPAttach:      int(b.MaxMcastQPAttach),
		MaxTotalMcastQPAttach: int(b.MaxTotalMcastQPAttach),
		MaxFMR:                int(b.MaxFMR),
		MaxMapPerFMR:          int(b.MaxMapPerFMR),

		CompletionTimestampMask:    resp.TimestampMask,
		HCACoreClock:               resp.HCACoreClock,
		RawPacketCaps:              RawPacketCap(resp.RawPacketCaps),
		RSSSupportedQPTs:           resp.RSSCaps.SupportedQPTs,
		MaxRWQIndirectionTables:    int(resp.RSSCaps.MaxRWQIndirectionTables),
		MaxRWQIndirectionTableSize: int(resp.RSSCaps.MaxRWQIndirectionTableSize),
		MaxWQTypeRQ:                int(resp.MaxWQTypeRQ),
		TMMaxRndvHdrSize:           resp.TMCaps.MaxRndvHdrSize,
		TMMaxNumTags:               resp.TMCaps.MaxNumTags,
		TMFlags:                    resp.TMCaps.Flags,
		TMMaxOps:                   resp.TMCaps.MaxOps,
		TMMaxSGE:                   resp.TMCaps.MaxSGE,
		MaxCQModerationCount:       resp.CQModerationCaps.MaxCQModerationCount,
		MaxCQModerationPeriod:      resp.CQModerationCaps.MaxCQModerationPeriod,
		MaxDMSize:                  resp.MaxDMSize,
	}, nil
}

// guidFromBE converts a __be64 GUID field, as read in host order, into a
// GUID.
func guidFromBE(v uint64) GUID {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], v)
	return GUID(binary.BigEndian.Uint64(b[:]))
}

// PortState is a port's logical state (enum ibv_port_state).
type PortState uint8

// Port states.
const (
	PortNop         PortState = 0 // IB_PORT_NOP
	PortDown        PortState = 1 // IB_PORT_DOWN
	PortInit        PortState = 2 // IB_PORT_INIT
	PortArmed       PortState = 3 // IB_PORT_ARMED
	PortActive      PortState = 4 // IB_PORT_ACTIVE
	PortActiveDefer PortState = 5 // IB_PORT_ACTIVE_DEFER
)

//go:generate go run ../hack/namegen -type PortState -trimprefix IB_ -unknown "invalid state" -doc "String returns the name ibv_devinfo prints, e.g. \"PORT_ACTIVE\"."

// MTU is an IB path MTU code (enum ibv_mtu).
type MTU uint8

// MTUs.
const (
	MTU256  MTU = 1 // IB_MTU_256
	MTU512  MTU = 2 // IB_MTU_512
	MTU1024 MTU = 3 // IB_MTU_1024
	MTU2048 MTU = 4 // IB_MTU_2048
	MTU4096 MTU = 5 // IB_MTU_4096
)

// Bytes returns the MTU in bytes, 0 for an invalid code.
func (m MTU) Bytes() int {
	if m < MTU256 || m > MTU4096 {
		return 0
	}
	return 128 << m
}

// LinkLayer is the link layer of a port.
type LinkLayer uint8

// Link layers.
const (
	LinkLayerUnspecified LinkLayer = 0 // IB_LINK_LAYER_UNSPECIFIED
	LinkLayerInfiniBand  LinkLayer = 1 // IB_LINK_LAYER_INFINIBAND
	LinkLayerEthernet    LinkLayer = 2 // IB_LINK_LAYER_ETHERNET
)

// String returns the name ibv_devinfo prints; an unspecified link layer
// prints as InfiniBand. The texts are kept by hand: they are no C constant
// names.
func (l LinkLayer) String() string {
	switch l {
	case LinkLayerInfiniBand, LinkLayerUnspecified:
		return "InfiniBand"
	case LinkLayerEthernet:
		return "Ethernet"
	}
	return "Unknown"
}

// PortAttr is what QueryPort reports: ibv_port_attr.
type PortAttr struct {
	State         PortState
	MaxMTU        MTU
	ActiveMTU     MTU
	GIDTblLen     int
	PortCapFlags  PortCap
	MaxMsgSz      uint32
	BadPKeyCntr   uint32
	QKeyViolCntr  uint32
	PKeyTblLen    uint16
	LID           uint16
	SMLID         uint16
	LMC           uint8
	MaxVLNum      uint8
	SMSL          uint8
	SubnetTimeout uint8
	InitTypeReply uint8
	ActiveWidth   uint8
	ActiveSpeed   uint8
	PhysState     uint8
	LinkLayer     LinkLayer
	Flags         uint8
	// PortCapFlags2 is the second capability word (IB_UVERBS_PCF2_*
	// bits), which only the ioctl port query returns; 0 where the kernel
	// has none.
	PortCapFlags2 uint16
}

// QueryPort returns the attributes of port (numbered from 1).
func (c *Context) QueryPort(port uint8) (PortAttr, error) {
	if c == nil {
		return PortAttr{}, ErrClosed
	}
	// The ioctl method returns port_cap_flags2 besides the legacy
	// response; kernels or drivers without it get the write command, as
	// libibverbs falls back.
	var ex abi.QueryPortRespEx
	m := ucmd.NewMethod(abi.UVERBS_OBJECT_DEVICE, abi.UVERBS_METHOD_QUERY_PORT)
	m.Const(abi.UVERBS_ATTR_QUERY_PORT_PORT_NUM, uint64(port))
	m.Out(abi.UVERBS_ATTR_QUERY_PORT_RESP, ucmd.Bytes(&ex))
	err := c.run(m)
	if errors.Is(err, syscall.ENOTTY) || errors.Is(err, syscall.EPROTONOSUPPORT) || errors.Is(err, syscall.EOPNOTSUPP) {
		err = c.queryPortWrite(port, &ex.LegacyResp)
	}
	if err != nil {
		return PortAttr{}, fmt.Errorf("uverbs: query port %d: %w", port, err)
	}
	return portAttr(&ex), nil
}

// queryPortWrite is the write command QueryPort falls back to.
func (c *Context) queryPortWrite(port uint8, resp *abi.QueryPortResp) error {
	req := abi.QueryPort{PortNum: port}
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_QUERY_PORT, Req: ucmd.Bytes(&req), Resp: ucmd.Bytes(resp)}
	return c.do(&cmd)
}

func portAttr(ex *abi.QueryPortRespEx) PortAttr {
	resp := &ex.LegacyResp
	return PortAttr{
		State:         PortState(resp.State),
		MaxMTU:        MTU(resp.MaxMTU),
		ActiveMTU:     MTU(resp.ActiveMTU),
		GIDTblLen:     int(resp.GIDTblLen),
		PortCapFlags:  PortCap(resp.PortCapFlags),
		MaxMsgSz:      resp.MaxMsgSz,
		BadPKeyCntr:   resp.BadPKeyCntr,
		QKeyViolCntr:  resp.QKeyViolCntr,
		PKeyTblLen:    resp.PKeyTblLen,
		LID:           resp.LID,
		SMLID:         resp.SMLID,
		LMC:           resp.LMC,
		MaxVLNum:      resp.MaxVLNum,
		SMSL:          resp.SMSL,
		SubnetTimeout: resp.SubnetTimeout,
		InitTypeReply: resp.InitTypeReply,
		ActiveWidth:   resp.ActiveWidth,
		ActiveSpeed:   resp.ActiveSpeed,
		PhysState:     resp.PhysState,
		LinkLayer:     LinkLayer(resp.LinkLayer),
		Flags:         resp.Flags,
		PortCapFlags2: ex.PortCapFlags2,
	}
}

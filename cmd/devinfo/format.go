package main

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"

	"github.com/purerdma/purerdma/uverbs"
)

// The formats below follow libibverbs/examples/devinfo.c of rdma-core v44
// (the version Debian bookworm ships, which the VM tests compare against).
//
// The TSO, RSS hash and packet pacing capabilities ibv_devinfo -v prints
// come from provider-private response data (mlx5's), not from the kernel's
// common EX_QUERY_DEVICE response; libibverbs leaves them zero for every
// other provider, rxe and siw included, and so does devinfo.

// deviceInfo is everything printDevice prints about one device.
type deviceInfo struct {
	Name      string
	Transport transport
	BoardID   string // "" when the driver has none
	CompVecs  int    // the context's num_comp_vectors
	Attr      uverbs.DeviceAttr
	Ports     []portInfo // the ports to print, in order
}

type portInfo struct {
	Num  uint8
	Attr uverbs.PortAttr
	GIDs []gidLine // with -v: the entries ibv_devinfo prints, in index order
}

type gidLine struct {
	Index int
	GID   uverbs.GID
	Type  uverbs.GIDType
}

// transport is enum ibv_transport_type.
type transport int

const (
	transportUnknown     transport = -1
	transportIB          transport = 0
	transportIWARP       transport = 1
	transportUSNIC       transport = 2
	transportUSNICUDP    transport = 3
	transportUnspecified transport = 4
)

// transportOf derives the transport from the node type, as libibverbs does
// when it lists devices.
func transportOf(n uverbs.NodeType) transport {
	switch n {
	case uverbs.NodeCA, uverbs.NodeSwitch, uverbs.NodeRouter:
		return transportIB
	case uverbs.NodeRNIC:
		return transportIWARP
	case uverbs.NodeUSNIC:
		return transportUSNIC
	case uverbs.NodeUSNICUD:
		return transportUSNICUDP
	case uverbs.NodeUnspec:
		return transportUnspecified
	}
	return transportUnknown
}

func (t transport) String() string {
	switch t {
	case transportIB:
		return "InfiniBand"
	case transportIWARP:
		return "iWARP"
	case transportUSNIC:
		return "usNIC"
	case transportUSNICUDP:
		return "usNIC UDP"
	}
	return "invalid transport"
}

func portStateStr(s uverbs.PortState) string {
	switch s {
	case uverbs.PortDown, uverbs.PortInit, uverbs.PortArmed, uverbs.PortActive:
		return s.String()
	}
	return "invalid state"
}

func physStateStr(s uint8) string {
	switch s {
	case 1:
		return "SLEEP"
	case 2:
		return "POLLING"
	case 3:
		return "DISABLED"
	case 4:
		return "PORT_CONFIGURATION TRAINNING" // sic, as rdma-core spells it
	case 5:
		return "LINK_UP"
	case 6:
		return "LINK_ERROR_RECOVERY"
	case 7:
		return "PHY TEST"
	}
	return "invalid physical state"
}

func atomicCapStr(a uverbs.AtomicCap) string {
	switch a {
	case uverbs.AtomicNone:
		return "ATOMIC_NONE"
	case uverbs.AtomicHCA:
		return "ATOMIC_HCA"
	case uverbs.AtomicGlob:
		return "ATOMIC_GLOB"
	}
	return "invalid atomic capability"
}

func mtuStr(m uverbs.MTU) string {
	if n := m.Bytes(); n != 0 {
		return fmt.Sprint(n)
	}
	return "invalid MTU"
}

func widthStr(w uint8) string {
	switch w {
	case 1:
		return "1"
	case 2:
		return "4"
	case 4:
		return "8"
	case 8:
		return "12"
	case 16:
		return "2"
	}
	return "invalid width"
}

func speedStr(s uint8) string {
	switch s {
	case 1:
		return "2.5 Gbps"
	case 2:
		return "5.0 Gbps"
	case 4, 8:
		return "10.0 Gbps"
	case 16:
		return "14.0 Gbps"
	case 32:
		return "25.0 Gbps"
	case 64:
		return "50.0 Gbps"
	case 128:
		return "100.0 Gbps"
	}
	return "invalid speed"
}

func vlStr(v uint8) string {
	switch v {
	case 1:
		return "1"
	case 2:
		return "2"
	case 3:
		return "4"
	case 4:
		return "8"
	case 5:
		return "15"
	}
	return "invalid value"
}

// deviceCapFlags are the legacy 32-bit IBV_DEVICE_* flags ibv_devinfo names,
// in the order it prints them; DeviceCap.String gives its names.
var deviceCapFlags = named(
	uverbs.DeviceResizeMaxWR,
	uverbs.DeviceBadPKeyCntr,
	uverbs.DeviceBadQKeyCntr,
	uverbs.DeviceRawMulti,
	uverbs.DeviceAutoPathMig,
	uverbs.DeviceChangePhyPort,
	uverbs.DeviceUDAVPortEnforce,
	uverbs.DeviceCurrQPStateMod,
	uverbs.DeviceShutdownPort,
	uverbs.DeviceInitType,
	uverbs.DevicePortActiveEvent,
	uverbs.DeviceSysImageGUID,
	uverbs.DeviceRCRNRNAKGen,
	uverbs.DeviceSRQResize,
	uverbs.DeviceNNotifyCQ,
	uverbs.DeviceMemWindow,
	uverbs.DeviceUDIPCsum,
	uverbs.DeviceXRC,
	uverbs.DeviceMemMgtExtensions,
	uverbs.DeviceMemWindowType2A,
	uverbs.DeviceMemWindowType2B,
	uverbs.DeviceRCIPCsum,
	uverbs.DeviceRawIPCsum,
	uverbs.DeviceManagedFlowSteering,
)

// deviceCapFlagsEx are the extended device capability flags (the upper 32
// bits) ibv_devinfo names; it prints the others, FLUSH_GLOBAL and the like
// included, as unknown.
var deviceCapFlagsEx = named(
	uverbs.DeviceRawScatterFCS,
	uverbs.DevicePCIWriteEndPadding,
)

// named returns the table of bits, each with the name its String gives.
func named[T interface {
	~uint32 | ~uint64
	String() string
}](bits ...T) []flagName {
	t := make([]flagName, len(bits))
	for i, b := range bits {
		t[i] = flagName{uint64(b), b.String()}
	}
	return t
}

// flagName is one bit of a capability mask and the name ibv_devinfo
// prints for it.
type flagName struct {
	bit  uint64
	name string
}

// printFlags prints, one a line, the names of the flags set in v in the
// table's order and, when unknown is set, the bits the table does not
// name, as ibv_devinfo prints every capability mask but the raw packet
// caps.
func printFlags(p func(string, ...any), v uint64, flags []flagName, unknown bool) {
	known := uint64(0)
	for _, f := range flags {
		known |= f.bit
		if v&f.bit != 0 {
			p("\t\t\t\t\t%s\n", f.name)
		}
	}
	if u := v &^ known; unknown && u != 0 {
		p("\t\t\t\t\tUnknown flags: 0x%X\n", u)
	}
}

// printList prints the -l output.
func printList(w io.Writer, names []string) error {
	bw := bufio.NewWriter(w)
	s := "s"
	if len(names) == 1 {
		s = ""
	}
	fmt.Fprintf(bw, "%d HCA%s found:\n", len(names), s)
	for _, n := range names {
		fmt.Fprintf(bw, "\t%s\n", n)
	}
	fmt.Fprintf(bw, "\n")
	return bw.Flush()
}

// printDevice prints one device as ibv_devinfo does, verbose as with -v.
func printDevice(w io.Writer, d *deviceInfo, verbose bool) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	a := &d.Attr

	p("hca_id:\t%s\n", d.Name)
	p("\ttransport:\t\t\t%s (%d)\n", d.Transport, int(d.Transport))
	if a.FWVer != "" {
		p("\tfw_ver:\t\t\t\t%s\n", a.FWVer)
	}
	p("\tnode_guid:\t\t\t%s\n", a.NodeGUID)
	p("\tsys_image_guid:\t\t\t%s\n", a.SysImageGUID)
	p("\tvendor_id:\t\t\t0x%04x\n", a.VendorID)
	p("\tvendor_part_id:\t\t\t%d\n", int32(a.VendorPartID))
	p("\thw_ver:\t\t\t\t0x%X\n", a.HWVer)
	if d.BoardID != "" {
		p("\tboard_id:\t\t\t%s\n", d.BoardID)
	}
	p("\tphys_port_cnt:\t\t\t%d\n", a.PhysPortCnt)

	if verbose {
		p("\tmax_mr_size:\t\t\t0x%x\n", a.MaxMRSize)
		p("\tpage_size_cap:\t\t\t0x%x\n", a.PageSizeCap)
		p("\tmax_qp:\t\t\t\t%d\n", a.MaxQP)
		p("\tmax_qp_wr:\t\t\t%d\n", a.MaxQPWR)
		legacy := uint32(a.DeviceCapFlags)
		p("\tdevice_cap_flags:\t\t0x%08x\n", legacy)
		printFlags(p, uint64(legacy), deviceCapFlags, true)
		p("\tmax_sge:\t\t\t%d\n", a.MaxSGE)
		p("\tmax_sge_rd:\t\t\t%d\n", a.MaxSGERD)
		p("\tmax_cq:\t\t\t\t%d\n", a.MaxCQ)
		p("\tmax_cqe:\t\t\t%d\n", a.MaxCQE)
		p("\tmax_mr:\t\t\t\t%d\n", a.MaxMR)
		p("\tmax_pd:\t\t\t\t%d\n", a.MaxPD)
		p("\tmax_qp_rd_atom:\t\t\t%d\n", a.MaxQPRdAtom)
		p("\tmax_ee_rd_atom:\t\t\t%d\n", a.MaxEERdAtom)
		p("\tmax_res_rd_atom:\t\t%d\n", a.MaxResRdAtom)
		p("\tmax_qp_init_rd_atom:\t\t%d\n", a.MaxQPInitRdAtom)
		p("\tmax_ee_init_rd_atom:\t\t%d\n", a.MaxEEInitRdAtom)
		p("\tatomic_cap:\t\t\t%s (%d)\n", atomicCapStr(a.AtomicCap), a.AtomicCap)
		p("\tmax_ee:\t\t\t\t%d\n", a.MaxEE)
		p("\tmax_rdd:\t\t\t%d\n", a.MaxRDD)
		p("\tmax_mw:\t\t\t\t%d\n", a.MaxMW)
		p("\tmax_raw_ipv6_qp:\t\t%d\n", a.MaxRawIPv6QP)
		p("\tmax_raw_ethy_qp:\t\t%d\n", a.MaxRawEthyQP)
		p("\tmax_mcast_grp:\t\t\t%d\n", a.MaxMcastGrp)
		p("\tmax_mcast_qp_attach:\t\t%d\n", a.MaxMcastQPAttach)
		p("\tmax_total_mcast_qp_attach:\t%d\n", a.MaxTotalMcastQPAttach)
		p("\tmax_ah:\t\t\t\t%d\n", a.MaxAH)
		p("\tmax_fmr:\t\t\t%d\n", a.MaxFMR)
		if a.MaxFMR != 0 {
			p("\tmax_map_per_fmr:\t\t%d\n", a.MaxMapPerFMR)
		}
		p("\tmax_srq:\t\t\t%d\n", a.MaxSRQ)
		if a.MaxSRQ != 0 {
			p("\tmax_srq_wr:\t\t\t%d\n", a.MaxSRQWR)
			p("\tmax_srq_sge:\t\t\t%d\n", a.MaxSRQSGE)
		}
		p("\tmax_pkeys:\t\t\t%d\n", a.MaxPKeys)
		p("\tlocal_ca_ack_delay:\t\t%d\n", a.LocalCAAckDelay)
		printODPCaps(p, a)
		if a.CompletionTimestampMask != 0 {
			p("\tcompletion timestamp_mask:\t\t\t0x%016x\n", a.CompletionTimestampMask)
		} else {
			p("\tcompletion_timestamp_mask not supported\n")
		}
		if a.HCACoreClock != 0 {
			p("\thca_core_clock:\t\t\t%dkHZ\n", a.HCACoreClock)
		} else {
			p("\tcore clock not supported\n")
		}
		if c := a.RawPacketCaps; c != 0 {
			p("\traw packet caps:\n")
			printFlags(p, uint64(c), rawPacketCaps, false)
		}
		// DeviceCapFlags holds the kernel's device_cap_flags_ex (a
		// superset of the legacy bits), which is what ibv_devinfo prints
		// here.
		p("\tdevice_cap_flags_ex:\t\t0x%X\n", uint64(a.DeviceCapFlags))
		printFlags(p, uint64(a.DeviceCapFlags)&0xffffffff00000000, deviceCapFlagsEx, true)
		// TSO: provider data only (see the top of this file).
		p("\ttso_caps:\n")
		p("\tmax_tso:\t\t\t%d\n", 0)
		p("\trss_caps:\n")
		p("\t\tmax_rwq_indirection_tables:\t\t\t%d\n", a.MaxRWQIndirectionTables)
		p("\t\tmax_rwq_indirection_table_size:\t\t\t%d\n", a.MaxRWQIndirectionTableSize)
		p("\t\trx_hash_function:\t\t\t\t0x%x\n", 0)    // provider data only
		p("\t\trx_hash_fields_mask:\t\t\t\t0x%X\n", 0) // provider data only
		if q := a.RSSSupportedQPTs; q != 0 {
			p("\t\tsupported_qp:\n")
			printQPTs(p, q)
		}
		p("\tmax_wq_type_rq:\t\t\t%d\n", a.MaxWQTypeRQ)
		// Packet pacing: provider data only, so never a supported_qp list.
		p("\tpacket_pacing_caps:\n")
		p("\t\tqp_rate_limit_min:\t%dkbps\n", 0)
		p("\t\tqp_rate_limit_max:\t%dkbps\n", 0)
		if a.TMMaxNumTags != 0 {
			p("\tmax_rndv_hdr_size:\t\t%d\n", a.TMMaxRndvHdrSize)
			p("\tmax_num_tags:\t\t\t%d\n", a.TMMaxNumTags)
			p("\tmax_ops:\t\t\t%d\n", a.TMMaxOps)
			p("\tmax_sge:\t\t\t%d\n", a.TMMaxSGE)
			p("\tflags:\n")
			if a.TMFlags&tmCapRC != 0 {
				p("\t\t\t\t\tIBV_TM_CAP_RC\n")
			}
		} else {
			p("\ttag matching not supported\n")
		}
		if a.MaxCQModerationCount != 0 && a.MaxCQModerationPeriod != 0 {
			p("\n\tcq moderation caps:\n")
			p("\t\tmax_cq_count:\t%d\n", a.MaxCQModerationCount)
			p("\t\tmax_cq_period:\t%d us\n\n", a.MaxCQModerationPeriod)
		}
		if a.MaxDMSize != 0 {
			p("\tmaximum available device memory:\t%dBytes\n\n", a.MaxDMSize)
		}
		p("\tnum_comp_vectors:\t\t%d\n", d.CompVecs)
	}

	for _, port := range d.Ports {
		pa := &port.Attr
		p("\t\tport:\t%d\n", port.Num)
		p("\t\t\tstate:\t\t\t%s (%d)\n", portStateStr(pa.State), pa.State)
		p("\t\t\tmax_mtu:\t\t%s (%d)\n", mtuStr(pa.MaxMTU), pa.MaxMTU)
		p("\t\t\tactive_mtu:\t\t%s (%d)\n", mtuStr(pa.ActiveMTU), pa.ActiveMTU)
		p("\t\t\tsm_lid:\t\t\t%d\n", pa.SMLID)
		p("\t\t\tport_lid:\t\t%d\n", pa.LID)
		p("\t\t\tport_lmc:\t\t0x%02x\n", pa.LMC)
		p("\t\t\tlink_layer:\t\t%s\n", pa.LinkLayer)
		if verbose {
			p("\t\t\tmax_msg_sz:\t\t0x%x\n", pa.MaxMsgSz)
			p("\t\t\tport_cap_flags:\t\t0x%08x\n", uint32(pa.PortCapFlags))
			p("\t\t\tport_cap_flags2:\t0x%04x\n", pa.PortCapFlags2)
			p("\t\t\tmax_vl_num:\t\t%s (%d)\n", vlStr(pa.MaxVLNum), pa.MaxVLNum)
			p("\t\t\tbad_pkey_cntr:\t\t0x%x\n", pa.BadPKeyCntr)
			p("\t\t\tqkey_viol_cntr:\t\t0x%x\n", pa.QKeyViolCntr)
			p("\t\t\tsm_sl:\t\t\t%d\n", pa.SMSL)
			p("\t\t\tpkey_tbl_len:\t\t%d\n", pa.PKeyTblLen)
			p("\t\t\tgid_tbl_len:\t\t%d\n", pa.GIDTblLen)
			p("\t\t\tsubnet_timeout:\t\t%d\n", pa.SubnetTimeout)
			p("\t\t\tinit_type_reply:\t%d\n", pa.InitTypeReply)
			p("\t\t\tactive_width:\t\t%sX (%d)\n", widthStr(pa.ActiveWidth), pa.ActiveWidth)
			p("\t\t\tactive_speed:\t\t%s (%d)\n", speedStr(pa.ActiveSpeed), pa.ActiveSpeed)
			if d.Transport == transportIB {
				p("\t\t\tphys_state:\t\t%s (%d)\n", physStateStr(pa.PhysState), pa.PhysState)
			}
			for _, g := range port.GIDs {
				p("\t\t\tGID[%3d]:\t\t%s\n", g.Index, gidStr(g, pa.LinkLayer))
			}
		}
		p("\n")
	}
	return bw.Flush()
}

// tmCapRC is IBV_TM_CAP_RC (IB_UVERBS_TM_CAP_RC): tag matching on RC QPs.
const tmCapRC = 1 << 0

// rawPacketCaps are the raw packet offloads with the texts ibv_devinfo
// prints for them, not their names.
var rawPacketCaps = []flagName{
	{uint64(uverbs.RawPacketCVLANStripping), "C-VLAN stripping offload"},
	{uint64(uverbs.RawPacketScatterFCS), "Scatter FCS offload"},
	{uint64(uverbs.RawPacketIPCsum), "IP csum offload"},
	{uint64(uverbs.RawPacketDelayDrop), "Delay drop"},
}

// qptRawPacket is IBV_QPT_RAW_PACKET, a QP type uverbs does not create.
const qptRawPacket = 8

// supportedQPTs are the QP types of the supported_qp lists ibv_devinfo
// names, in its order.
var supportedQPTs = []flagName{
	{1 << qptRawPacket, "SUPPORT_RAW_PACKET"},
	{1 << uverbs.UD, "SUPPORT_UD"},
}

func printQPTs(p func(string, ...any), q uint32) {
	printFlags(p, uint64(q), supportedQPTs, true)
}

var odpGeneralCaps = named(uverbs.ODPSupport, uverbs.ODPSupportImplicit)

var odpTransCaps = named(
	uverbs.ODPSend,
	uverbs.ODPRecv,
	uverbs.ODPWrite,
	uverbs.ODPRead,
	uverbs.ODPAtomic,
	uverbs.ODPSRQRecv,
)

// printODPCaps prints the on-demand paging capabilities: the general ones,
// then per transport.
func printODPCaps(p func(string, ...any), a *uverbs.DeviceAttr) {
	p("\tgeneral_odp_caps:\n")
	printFlags(p, uint64(a.ODPGeneralCaps), odpGeneralCaps, true)
	for _, t := range []struct {
		name string
		caps uverbs.ODPTransport
	}{{"rc", a.ODPRCCaps}, {"uc", a.ODPUCCaps}, {"ud", a.ODPUDCaps}, {"xrc", a.ODPXRCCaps}} {
		p("\t%s_odp_caps:\n", t.name)
		if t.caps == 0 {
			p("\t\t\t\t\tNO SUPPORT\n")
			continue
		}
		printFlags(p, uint64(t.caps), odpTransCaps, true)
	}
}

// gidStr formats a GID table entry as ibv_devinfo -v does: RoCE v2 GIDs as
// IPv6 text (inet_ntop's), the others as eight groups of four hex digits,
// and on Ethernet ports followed by the GID type, with IB and RoCE v1 not
// told apart (sysfs names both "IB/RoCE v1").
func gidStr(g gidLine, ll uverbs.LinkLayer) string {
	var s string
	if g.Type == uverbs.GIDTypeRoCEv2 {
		s = inetNtop6(g.GID)
	} else {
		b := g.GID
		s = fmt.Sprintf("%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
			b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
	}
	if ll == uverbs.LinkLayerEthernet {
		if g.Type == uverbs.GIDTypeRoCEv2 {
			s += ", RoCE v2"
		} else {
			s += ", RoCE v1"
		}
	}
	return s
}

// inetNtop6 is glibc's inet_ntop(AF_INET6): RFC 5952 text, except that
// an IPv4-compatible address (::a.b.c.d, 96 zero bits then a non-zero
// word) keeps its dotted tail, which netip does not write.
func inetNtop6(g uverbs.GID) string {
	if [12]byte(g[:12]) == [12]byte{} && (g[12] != 0 || g[13] != 0) {
		return "::" + netip.AddrFrom4([4]byte(g[12:])).String()
	}
	return netip.AddrFrom16(g).String()
}

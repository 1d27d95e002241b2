package main

import (
	"bufio"
	"fmt"
	"io"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/uverbs"
)

// The formats below follow libibverbs/examples/devinfo.c of rdma-core v44
// (the version Debian bookworm ships, which the VM tests compare against).
//
// With -v, ibv_devinfo also prints lines that uverbs.DeviceAttr and
// uverbs.PortAttr do not carry, and devinfo leaves them out: max_ee_rd_atom,
// max_ee_init_rd_atom, max_ee, max_rdd, max_raw_ipv6_qp, max_raw_ethy_qp,
// max_mcast_qp_attach, max_total_mcast_qp_attach, max_fmr, max_map_per_fmr,
// the ODP, timestamp, clock, raw packet, TSO, RSS, WQ, packet pacing, tag
// matching, CQ moderation and device memory capabilities, port_cap_flags2,
// and the GID table.

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
// in the order it prints them.
var deviceCapFlags = []struct {
	bit  uint32
	name string
}{
	{abi.IB_UVERBS_DEVICE_RESIZE_MAX_WR, "RESIZE_MAX_WR"},
	{abi.IB_UVERBS_DEVICE_BAD_PKEY_CNTR, "BAD_PKEY_CNTR"},
	{abi.IB_UVERBS_DEVICE_BAD_QKEY_CNTR, "BAD_QKEY_CNTR"},
	{abi.IB_UVERBS_DEVICE_RAW_MULTI, "RAW_MULTI"},
	{abi.IB_UVERBS_DEVICE_AUTO_PATH_MIG, "AUTO_PATH_MIG"},
	{abi.IB_UVERBS_DEVICE_CHANGE_PHY_PORT, "CHANGE_PHY_PORT"},
	{abi.IB_UVERBS_DEVICE_UD_AV_PORT_ENFORCE, "UD_AV_PORT_ENFORCE"},
	{abi.IB_UVERBS_DEVICE_CURR_QP_STATE_MOD, "CURR_QP_STATE_MOD"},
	{abi.IB_UVERBS_DEVICE_SHUTDOWN_PORT, "SHUTDOWN_PORT"},
	{1 << 9, "INIT_TYPE"}, // IBV_DEVICE_INIT_TYPE: libibverbs only, no uapi name
	{abi.IB_UVERBS_DEVICE_PORT_ACTIVE_EVENT, "PORT_ACTIVE_EVENT"},
	{abi.IB_UVERBS_DEVICE_SYS_IMAGE_GUID, "SYS_IMAGE_GUID"},
	{abi.IB_UVERBS_DEVICE_RC_RNR_NAK_GEN, "RC_RNR_NAK_GEN"},
	{abi.IB_UVERBS_DEVICE_SRQ_RESIZE, "SRQ_RESIZE"},
	{abi.IB_UVERBS_DEVICE_N_NOTIFY_CQ, "N_NOTIFY_CQ"},
	{abi.IB_UVERBS_DEVICE_MEM_WINDOW, "MEM_WINDOW"},
	{abi.IB_UVERBS_DEVICE_UD_IP_CSUM, "UD_IP_CSUM"},
	{abi.IB_UVERBS_DEVICE_XRC, "XRC"},
	{abi.IB_UVERBS_DEVICE_MEM_MGT_EXTENSIONS, "MEM_MGT_EXTENSIONS"},
	{abi.IB_UVERBS_DEVICE_MEM_WINDOW_TYPE_2A, "MEM_WINDOW_TYPE_2A"},
	{abi.IB_UVERBS_DEVICE_MEM_WINDOW_TYPE_2B, "MEM_WINDOW_TYPE_2B"},
	{abi.IB_UVERBS_DEVICE_RC_IP_CSUM, "RC_IP_CSUM"},
	{abi.IB_UVERBS_DEVICE_RAW_IP_CSUM, "RAW_IP_CSUM"},
	{abi.IB_UVERBS_DEVICE_MANAGED_FLOW_STEERING, "MANAGED_FLOW_STEERING"},
}

// Extended device capability flags (the upper 32 bits) ibv_devinfo names.
const (
	deviceRawScatterFCS             = abi.IB_UVERBS_DEVICE_RAW_SCATTER_FCS
	devicePCIWriteEndPadding        = abi.IB_UVERBS_DEVICE_PCI_WRITE_END_PADDING
	knownExFlags             uint64 = deviceRawScatterFCS | devicePCIWriteEndPadding
)

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
		known := uint32(0)
		for _, f := range deviceCapFlags {
			known |= f.bit
			if legacy&f.bit != 0 {
				p("\t\t\t\t\t%s\n", f.name)
			}
		}
		if u := legacy &^ known; u != 0 {
			p("\t\t\t\t\tUnknown flags: 0x%X\n", u)
		}
		p("\tmax_sge:\t\t\t%d\n", a.MaxSGE)
		p("\tmax_sge_rd:\t\t\t%d\n", a.MaxSGERD)
		p("\tmax_cq:\t\t\t\t%d\n", a.MaxCQ)
		p("\tmax_cqe:\t\t\t%d\n", a.MaxCQE)
		p("\tmax_mr:\t\t\t\t%d\n", a.MaxMR)
		p("\tmax_pd:\t\t\t\t%d\n", a.MaxPD)
		p("\tmax_qp_rd_atom:\t\t\t%d\n", a.MaxQPRdAtom)
		p("\tmax_res_rd_atom:\t\t%d\n", a.MaxResRdAtom)
		p("\tmax_qp_init_rd_atom:\t\t%d\n", a.MaxQPInitRdAtom)
		p("\tatomic_cap:\t\t\t%s (%d)\n", atomicCapStr(a.AtomicCap), a.AtomicCap)
		p("\tmax_mw:\t\t\t\t%d\n", a.MaxMW)
		p("\tmax_mcast_grp:\t\t\t%d\n", a.MaxMcastGrp)
		p("\tmax_ah:\t\t\t\t%d\n", a.MaxAH)
		p("\tmax_srq:\t\t\t%d\n", a.MaxSRQ)
		if a.MaxSRQ != 0 {
			p("\tmax_srq_wr:\t\t\t%d\n", a.MaxSRQWR)
			p("\tmax_srq_sge:\t\t\t%d\n", a.MaxSRQSGE)
		}
		p("\tmax_pkeys:\t\t\t%d\n", a.MaxPKeys)
		p("\tlocal_ca_ack_delay:\t\t%d\n", a.LocalCAAckDelay)
		// DeviceCapFlags holds the kernel's device_cap_flags_ex (a
		// superset of the legacy bits), which is what ibv_devinfo prints
		// here.
		p("\tdevice_cap_flags_ex:\t\t0x%X\n", a.DeviceCapFlags)
		ex := a.DeviceCapFlags & 0xffffffff00000000
		if ex&deviceRawScatterFCS != 0 {
			p("\t\t\t\t\tRAW_SCATTER_FCS\n")
		}
		if ex&devicePCIWriteEndPadding != 0 {
			p("\t\t\t\t\tPCI_WRITE_END_PADDING\n")
		}
		if u := ex &^ knownExFlags; u != 0 {
			p("\t\t\t\t\tUnknown flags: 0x%X\n", u)
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
			p("\t\t\tport_cap_flags:\t\t0x%08x\n", pa.PortCapFlags)
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
		}
		p("\n")
	}
	return bw.Flush()
}

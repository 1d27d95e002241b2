package uverbs

import (
	"fmt"
	"strings"
)

// The capability words of DeviceAttr and PortAttr. Each is a set of bits
// the kernel reports; String names the set bits, lowest first, joined by
// "|", with the names ibv_devinfo -v prints, and writes any bit without a
// name as hex (so "MEM_WINDOW|0x80000000"); 0 prints as "0". A kernel
// sets only the bits it knows, and a newer one may set bits that have no
// name here: they are kept, never acted on.

// DeviceCap is the device capability word (DeviceAttr.DeviceCapFlags):
// the IBV_DEVICE_* bits of ibv_device_attr.device_cap_flags in the low 32
// bits and those of ibv_device_attr_ex.device_cap_flags_ex above.
type DeviceCap uint64

// Device capabilities (enum ib_uverbs_device_cap_flags). String prints
// each C name without its prefix IB_UVERBS_DEVICE_.
const (
	DeviceResizeMaxWR         DeviceCap = 1 << 0  // IB_UVERBS_DEVICE_RESIZE_MAX_WR
	DeviceBadPKeyCntr         DeviceCap = 1 << 1  // IB_UVERBS_DEVICE_BAD_PKEY_CNTR
	DeviceBadQKeyCntr         DeviceCap = 1 << 2  // IB_UVERBS_DEVICE_BAD_QKEY_CNTR
	DeviceRawMulti            DeviceCap = 1 << 3  // IB_UVERBS_DEVICE_RAW_MULTI
	DeviceAutoPathMig         DeviceCap = 1 << 4  // IB_UVERBS_DEVICE_AUTO_PATH_MIG
	DeviceChangePhyPort       DeviceCap = 1 << 5  // IB_UVERBS_DEVICE_CHANGE_PHY_PORT
	DeviceUDAVPortEnforce     DeviceCap = 1 << 6  // IB_UVERBS_DEVICE_UD_AV_PORT_ENFORCE
	DeviceCurrQPStateMod      DeviceCap = 1 << 7  // IB_UVERBS_DEVICE_CURR_QP_STATE_MOD
	DeviceShutdownPort        DeviceCap = 1 << 8  // IB_UVERBS_DEVICE_SHUTDOWN_PORT
	DeviceInitType            DeviceCap = 1 << 9  // IBV_DEVICE_INIT_TYPE: libibverbs names it; the kernel has no uapi name
	DevicePortActiveEvent     DeviceCap = 1 << 10 // IB_UVERBS_DEVICE_PORT_ACTIVE_EVENT
	DeviceSysImageGUID        DeviceCap = 1 << 11 // IB_UVERBS_DEVICE_SYS_IMAGE_GUID
	DeviceRCRNRNAKGen         DeviceCap = 1 << 12 // IB_UVERBS_DEVICE_RC_RNR_NAK_GEN
	DeviceSRQResize           DeviceCap = 1 << 13 // IB_UVERBS_DEVICE_SRQ_RESIZE
	DeviceNNotifyCQ           DeviceCap = 1 << 14 // IB_UVERBS_DEVICE_N_NOTIFY_CQ
	DeviceMemWindow           DeviceCap = 1 << 17 // IB_UVERBS_DEVICE_MEM_WINDOW
	DeviceUDIPCsum            DeviceCap = 1 << 18 // IB_UVERBS_DEVICE_UD_IP_CSUM
	DeviceXRC                 DeviceCap = 1 << 20 // IB_UVERBS_DEVICE_XRC
	DeviceMemMgtExtensions    DeviceCap = 1 << 21 // IB_UVERBS_DEVICE_MEM_MGT_EXTENSIONS
	DeviceMemWindowType2A     DeviceCap = 1 << 23 // IB_UVERBS_DEVICE_MEM_WINDOW_TYPE_2A
	DeviceMemWindowType2B     DeviceCap = 1 << 24 // IB_UVERBS_DEVICE_MEM_WINDOW_TYPE_2B
	DeviceRCIPCsum            DeviceCap = 1 << 25 // IB_UVERBS_DEVICE_RC_IP_CSUM
	DeviceRawIPCsum           DeviceCap = 1 << 26 // IB_UVERBS_DEVICE_RAW_IP_CSUM: deprecated, see RawPacketIPCsum
	DeviceManagedFlowSteering DeviceCap = 1 << 29 // IB_UVERBS_DEVICE_MANAGED_FLOW_STEERING
	DeviceRawScatterFCS       DeviceCap = 1 << 34 // IB_UVERBS_DEVICE_RAW_SCATTER_FCS: deprecated, see RawPacketScatterFCS
	DevicePCIWriteEndPadding  DeviceCap = 1 << 36 // IB_UVERBS_DEVICE_PCI_WRITE_END_PADDING
	DeviceFlushGlobal         DeviceCap = 1 << 38 // IB_UVERBS_DEVICE_FLUSH_GLOBAL: RDMA FLUSH to global visibility, Linux 6.2+
	DeviceFlushPersistent     DeviceCap = 1 << 39 // IB_UVERBS_DEVICE_FLUSH_PERSISTENT: RDMA FLUSH to persistence, Linux 6.2+
	DeviceAtomicWrite         DeviceCap = 1 << 40 // IB_UVERBS_DEVICE_ATOMIC_WRITE: RDMA ATOMIC WRITE, Linux 6.2+
)

var deviceCapNames = [...]bitName{
	{uint64(DeviceResizeMaxWR), "RESIZE_MAX_WR"},
	{uint64(DeviceBadPKeyCntr), "BAD_PKEY_CNTR"},
	{uint64(DeviceBadQKeyCntr), "BAD_QKEY_CNTR"},
	{uint64(DeviceRawMulti), "RAW_MULTI"},
	{uint64(DeviceAutoPathMig), "AUTO_PATH_MIG"},
	{uint64(DeviceChangePhyPort), "CHANGE_PHY_PORT"},
	{uint64(DeviceUDAVPortEnforce), "UD_AV_PORT_ENFORCE"},
	{uint64(DeviceCurrQPStateMod), "CURR_QP_STATE_MOD"},
	{uint64(DeviceShutdownPort), "SHUTDOWN_PORT"},
	{uint64(DeviceInitType), "INIT_TYPE"},
	{uint64(DevicePortActiveEvent), "PORT_ACTIVE_EVENT"},
	{uint64(DeviceSysImageGUID), "SYS_IMAGE_GUID"},
	{uint64(DeviceRCRNRNAKGen), "RC_RNR_NAK_GEN"},
	{uint64(DeviceSRQResize), "SRQ_RESIZE"},
	{uint64(DeviceNNotifyCQ), "N_NOTIFY_CQ"},
	{uint64(DeviceMemWindow), "MEM_WINDOW"},
	{uint64(DeviceUDIPCsum), "UD_IP_CSUM"},
	{uint64(DeviceXRC), "XRC"},
	{uint64(DeviceMemMgtExtensions), "MEM_MGT_EXTENSIONS"},
	{uint64(DeviceMemWindowType2A), "MEM_WINDOW_TYPE_2A"},
	{uint64(DeviceMemWindowType2B), "MEM_WINDOW_TYPE_2B"},
	{uint64(DeviceRCIPCsum), "RC_IP_CSUM"},
	{uint64(DeviceRawIPCsum), "RAW_IP_CSUM"},
	{uint64(DeviceManagedFlowSteering), "MANAGED_FLOW_STEERING"},
	{uint64(DeviceRawScatterFCS), "RAW_SCATTER_FCS"},
	{uint64(DevicePCIWriteEndPadding), "PCI_WRITE_END_PADDING"},
	{uint64(DeviceFlushGlobal), "FLUSH_GLOBAL"},
	{uint64(DeviceFlushPersistent), "FLUSH_PERSISTENT"},
	{uint64(DeviceAtomicWrite), "ATOMIC_WRITE"},
}

// String returns the names of the set bits, e.g. "RESIZE_MAX_WR|XRC".
func (c DeviceCap) String() string { return bitsString(uint64(c), deviceCapNames[:]) }

// PortCap is the port capability word (PortAttr.PortCapFlags): the
// IBV_PORT_* bits of ibv_port_attr.port_cap_flags, the IBA's CapabilityMask.
type PortCap uint32

// Port capabilities (enum ib_uverbs_query_port_cap_flags). String prints
// each C name without its prefix IB_UVERBS_PCF_.
const (
	PortCapSM                          PortCap = 1 << 1  // IB_UVERBS_PCF_SM
	PortCapNoticeSup                   PortCap = 1 << 2  // IB_UVERBS_PCF_NOTICE_SUP
	PortCapTrapSup                     PortCap = 1 << 3  // IB_UVERBS_PCF_TRAP_SUP
	PortCapOptIPDSup                   PortCap = 1 << 4  // IB_UVERBS_PCF_OPT_IPD_SUP
	PortCapAutoMigrSup                 PortCap = 1 << 5  // IB_UVERBS_PCF_AUTO_MIGR_SUP
	PortCapSLMapSup                    PortCap = 1 << 6  // IB_UVERBS_PCF_SL_MAP_SUP
	PortCapMKeyNVRAM                   PortCap = 1 << 7  // IB_UVERBS_PCF_MKEY_NVRAM
	PortCapPKeyNVRAM                   PortCap = 1 << 8  // IB_UVERBS_PCF_PKEY_NVRAM
	PortCapLEDInfoSup                  PortCap = 1 << 9  // IB_UVERBS_PCF_LED_INFO_SUP
	PortCapSMDisabled                  PortCap = 1 << 10 // IB_UVERBS_PCF_SM_DISABLED
	PortCapSysImageGUIDSup             PortCap = 1 << 11 // IB_UVERBS_PCF_SYS_IMAGE_GUID_SUP
	PortCapPKeySwExtPortTrapSup        PortCap = 1 << 12 // IB_UVERBS_PCF_PKEY_SW_EXT_PORT_TRAP_SUP
	PortCapExtendedSpeedsSup           PortCap = 1 << 14 // IB_UVERBS_PCF_EXTENDED_SPEEDS_SUP
	PortCapCMSup                       PortCap = 1 << 16 // IB_UVERBS_PCF_CM_SUP
	PortCapSNMPTunnelSup               PortCap = 1 << 17 // IB_UVERBS_PCF_SNMP_TUNNEL_SUP
	PortCapReinitSup                   PortCap = 1 << 18 // IB_UVERBS_PCF_REINIT_SUP
	PortCapDeviceMgmtSup               PortCap = 1 << 19 // IB_UVERBS_PCF_DEVICE_MGMT_SUP
	PortCapVendorClassSup              PortCap = 1 << 20 // IB_UVERBS_PCF_VENDOR_CLASS_SUP
	PortCapDRNoticeSup                 PortCap = 1 << 21 // IB_UVERBS_PCF_DR_NOTICE_SUP
	PortCapCapMaskNoticeSup            PortCap = 1 << 22 // IB_UVERBS_PCF_CAP_MASK_NOTICE_SUP
	PortCapBootMgmtSup                 PortCap = 1 << 23 // IB_UVERBS_PCF_BOOT_MGMT_SUP
	PortCapLinkLatencySup              PortCap = 1 << 24 // IB_UVERBS_PCF_LINK_LATENCY_SUP
	PortCapClientRegSup                PortCap = 1 << 25 // IB_UVERBS_PCF_CLIENT_REG_SUP
	PortCapIPBasedGIDs                 PortCap = 1 << 26 // IB_UVERBS_PCF_IP_BASED_GIDS: a Linux flag, not an IBA one (RoCE)
	PortCapLinkSpeedWidthTableSup      PortCap = 1 << 27 // IB_UVERBS_PCF_LINK_SPEED_WIDTH_TABLE_SUP
	PortCapVendorSpecificMADsTableSup  PortCap = 1 << 28 // IB_UVERBS_PCF_VENDOR_SPECIFIC_MADS_TABLE_SUP
	PortCapMcastPKeyTrapSuppressionSup PortCap = 1 << 29 // IB_UVERBS_PCF_MCAST_PKEY_TRAP_SUPPRESSION_SUP
	PortCapMcastFDBTopSup              PortCap = 1 << 30 // IB_UVERBS_PCF_MCAST_FDB_TOP_SUP
	PortCapHierarchyInfoSup            PortCap = 1 << 31 // IB_UVERBS_PCF_HIERARCHY_INFO_SUP
)

var portCapNames = [...]bitName{
	{uint64(PortCapSM), "SM"},
	{uint64(PortCapNoticeSup), "NOTICE_SUP"},
	{uint64(PortCapTrapSup), "TRAP_SUP"},
	{uint64(PortCapOptIPDSup), "OPT_IPD_SUP"},
	{uint64(PortCapAutoMigrSup), "AUTO_MIGR_SUP"},
	{uint64(PortCapSLMapSup), "SL_MAP_SUP"},
	{uint64(PortCapMKeyNVRAM), "MKEY_NVRAM"},
	{uint64(PortCapPKeyNVRAM), "PKEY_NVRAM"},
	{uint64(PortCapLEDInfoSup), "LED_INFO_SUP"},
	{uint64(PortCapSMDisabled), "SM_DISABLED"},
	{uint64(PortCapSysImageGUIDSup), "SYS_IMAGE_GUID_SUP"},
	{uint64(PortCapPKeySwExtPortTrapSup), "PKEY_SW_EXT_PORT_TRAP_SUP"},
	{uint64(PortCapExtendedSpeedsSup), "EXTENDED_SPEEDS_SUP"},
	{uint64(PortCapCMSup), "CM_SUP"},
	{uint64(PortCapSNMPTunnelSup), "SNMP_TUNNEL_SUP"},
	{uint64(PortCapReinitSup), "REINIT_SUP"},
	{uint64(PortCapDeviceMgmtSup), "DEVICE_MGMT_SUP"},
	{uint64(PortCapVendorClassSup), "VENDOR_CLASS_SUP"},
	{uint64(PortCapDRNoticeSup), "DR_NOTICE_SUP"},
	{uint64(PortCapCapMaskNoticeSup), "CAP_MASK_NOTICE_SUP"},
	{uint64(PortCapBootMgmtSup), "BOOT_MGMT_SUP"},
	{uint64(PortCapLinkLatencySup), "LINK_LATENCY_SUP"},
	{uint64(PortCapClientRegSup), "CLIENT_REG_SUP"},
	{uint64(PortCapIPBasedGIDs), "IP_BASED_GIDS"},
	{uint64(PortCapLinkSpeedWidthTableSup), "LINK_SPEED_WIDTH_TABLE_SUP"},
	{uint64(PortCapVendorSpecificMADsTableSup), "VENDOR_SPECIFIC_MADS_TABLE_SUP"},
	{uint64(PortCapMcastPKeyTrapSuppressionSup), "MCAST_PKEY_TRAP_SUPPRESSION_SUP"},
	{uint64(PortCapMcastFDBTopSup), "MCAST_FDB_TOP_SUP"},
	{uint64(PortCapHierarchyInfoSup), "HIERARCHY_INFO_SUP"},
}

// String returns the names of the set bits, e.g. "CM_SUP|IP_BASED_GIDS".
func (c PortCap) String() string { return bitsString(uint64(c), portCapNames[:]) }

// ODPGeneral is the device's general on-demand paging capability word
// (DeviceAttr.ODPGeneralCaps, ibv_odp_caps.general_caps).
type ODPGeneral uint64

// General on-demand paging capabilities. String prints each C name
// without its prefix IB_, as ibv_devinfo does.
const (
	ODPSupport         ODPGeneral = 1 << 0 // IB_ODP_SUPPORT: registering with OnDemand works
	ODPSupportImplicit ODPGeneral = 1 << 1 // IB_ODP_SUPPORT_IMPLICIT: implicit ODP, a region of the whole address space
)

var odpGeneralNames = [...]bitName{
	{uint64(ODPSupport), "ODP_SUPPORT"},
	{uint64(ODPSupportImplicit), "ODP_SUPPORT_IMPLICIT"},
}

// String returns the names of the set bits, e.g. "ODP_SUPPORT".
func (c ODPGeneral) String() string { return bitsString(uint64(c), odpGeneralNames[:]) }

// ODPTransport is the word of the operations a transport does with
// on-demand paging (DeviceAttr.ODPRCCaps, ODPUCCaps, ODPUDCaps and
// ODPXRCCaps: ibv_odp_caps.per_transport_caps).
type ODPTransport uint32

// Operations with on-demand paging, per transport. String prints the
// names ibv_devinfo prints: each C name without its prefix IB_ODP_, but
// SUPPORT_SRQ for IB_ODP_SUPPORT_SRQ_RECV.
const (
	ODPSend    ODPTransport = 1 << 0 // IB_ODP_SUPPORT_SEND
	ODPRecv    ODPTransport = 1 << 1 // IB_ODP_SUPPORT_RECV
	ODPWrite   ODPTransport = 1 << 2 // IB_ODP_SUPPORT_WRITE
	ODPRead    ODPTransport = 1 << 3 // IB_ODP_SUPPORT_READ
	ODPAtomic  ODPTransport = 1 << 4 // IB_ODP_SUPPORT_ATOMIC
	ODPSRQRecv ODPTransport = 1 << 5 // IB_ODP_SUPPORT_SRQ_RECV
)

var odpTransportNames = [...]bitName{
	{uint64(ODPSend), "SUPPORT_SEND"},
	{uint64(ODPRecv), "SUPPORT_RECV"},
	{uint64(ODPWrite), "SUPPORT_WRITE"},
	{uint64(ODPRead), "SUPPORT_READ"},
	{uint64(ODPAtomic), "SUPPORT_ATOMIC"},
	{uint64(ODPSRQRecv), "SUPPORT_SRQ"},
}

// String returns the names of the set bits, e.g.
// "SUPPORT_WRITE|SUPPORT_READ".
func (c ODPTransport) String() string { return bitsString(uint64(c), odpTransportNames[:]) }

// RawPacketCap is the word of raw packet QP offloads
// (DeviceAttr.RawPacketCaps, ibv_device_attr_ex.raw_packet_caps).
type RawPacketCap uint32

// Raw packet QP offloads (enum ib_uverbs_raw_packet_caps). String prints
// each C name without its prefix IB_UVERBS_RAW_PACKET_CAP_; ibv_devinfo
// prints sentences instead ("C-VLAN stripping offload").
const (
	RawPacketCVLANStripping RawPacketCap = 1 << 0 // IB_UVERBS_RAW_PACKET_CAP_CVLAN_STRIPPING
	RawPacketScatterFCS     RawPacketCap = 1 << 1 // IB_UVERBS_RAW_PACKET_CAP_SCATTER_FCS
	RawPacketIPCsum         RawPacketCap = 1 << 2 // IB_UVERBS_RAW_PACKET_CAP_IP_CSUM
	RawPacketDelayDrop      RawPacketCap = 1 << 3 // IB_UVERBS_RAW_PACKET_CAP_DELAY_DROP
)

var rawPacketCapNames = [...]bitName{
	{uint64(RawPacketCVLANStripping), "CVLAN_STRIPPING"},
	{uint64(RawPacketScatterFCS), "SCATTER_FCS"},
	{uint64(RawPacketIPCsum), "IP_CSUM"},
	{uint64(RawPacketDelayDrop), "DELAY_DROP"},
}

// String returns the names of the set bits, e.g. "CVLAN_STRIPPING".
func (c RawPacketCap) String() string { return bitsString(uint64(c), rawPacketCapNames[:]) }

// bitName is one bit of a capability word and the name String prints.
type bitName struct {
	bit  uint64
	name string
}

// bitsString joins the names of the bits of v that names has, in its
// order, with "|", and the rest of v as one hex number; 0 is "0".
func bitsString(v uint64, names []bitName) string {
	if v == 0 {
		return "0"
	}
	var b strings.Builder
	for _, n := range names {
		if v&n.bit == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		b.WriteString(n.name)
		v &^= n.bit
	}
	if v != 0 {
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		fmt.Fprintf(&b, "%#x", v)
	}
	return b.String()
}

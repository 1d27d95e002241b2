package uverbs

import (
	"fmt"
	"testing"
)

// TestCapStrings pins what the capability words print: the set bits'
// names, lowest first, joined by "|", the bits without a name as one hex
// number, and 0 as "0".
func TestCapStrings(t *testing.T) {
	for _, tt := range []struct {
		v    fmt.Stringer
		want string
	}{
		{DeviceCap(0), "0"},
		{DeviceResizeMaxWR, "RESIZE_MAX_WR"},
		{DeviceInitType, "INIT_TYPE"},
		{DeviceManagedFlowSteering, "MANAGED_FLOW_STEERING"},
		{DeviceAtomicWrite, "ATOMIC_WRITE"},
		// rxe on Linux 6.12.
		{DeviceCap(1<<40 | 1<<39 | 1<<38 | 1<<34 | 1<<31 | 1<<21 | 1<<13 | 1<<12 | 1<<11 | 1<<10 | 1<<1 | 1<<0),
			"RESIZE_MAX_WR|BAD_PKEY_CNTR|PORT_ACTIVE_EVENT|SYS_IMAGE_GUID|RC_RNR_NAK_GEN|SRQ_RESIZE|MEM_MGT_EXTENSIONS|RAW_SCATTER_FCS|FLUSH_GLOBAL|FLUSH_PERSISTENT|ATOMIC_WRITE|0x80000000"},
		{DeviceCap(1 << 63), "0x8000000000000000"},
		{DeviceCap(1<<63 | 1<<41 | 1<<15), "0x8000020000008000"},
		{DeviceXRC | DeviceCap(1<<15), "XRC|0x8000"},

		{PortCap(0), "0"},
		{PortCapSM, "SM"},
		{PortCapCMSup, "CM_SUP"},
		{PortCapHierarchyInfoSup, "HIERARCHY_INFO_SUP"},
		{PortCapCMSup | PortCapIPBasedGIDs, "CM_SUP|IP_BASED_GIDS"},
		{PortCap(1<<0 | 1<<13 | 1<<15), "0xa001"},
		{PortCapSM | PortCapTrapSup | PortCap(1<<13), "SM|TRAP_SUP|0x2000"},

		{ODPGeneral(0), "0"},
		{ODPSupport, "ODP_SUPPORT"},
		{ODPSupport | ODPSupportImplicit, "ODP_SUPPORT|ODP_SUPPORT_IMPLICIT"},
		{ODPGeneral(0x83), "ODP_SUPPORT|ODP_SUPPORT_IMPLICIT|0x80"},

		{ODPTransport(0), "0"},
		{ODPSend | ODPRecv | ODPWrite | ODPRead | ODPAtomic | ODPSRQRecv,
			"SUPPORT_SEND|SUPPORT_RECV|SUPPORT_WRITE|SUPPORT_READ|SUPPORT_ATOMIC|SUPPORT_SRQ"},
		{ODPWrite | ODPRead, "SUPPORT_WRITE|SUPPORT_READ"},
		{ODPTransport(0x40), "0x40"},
		{ODPTransport(0xffffffff), "SUPPORT_SEND|SUPPORT_RECV|SUPPORT_WRITE|SUPPORT_READ|SUPPORT_ATOMIC|SUPPORT_SRQ|0xffffffc0"},

		{RawPacketCap(0), "0"},
		{RawPacketCVLANStripping | RawPacketScatterFCS | RawPacketIPCsum | RawPacketDelayDrop,
			"CVLAN_STRIPPING|SCATTER_FCS|IP_CSUM|DELAY_DROP"},
		{RawPacketIPCsum | RawPacketCap(1<<4), "IP_CSUM|0x10"},
	} {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("%T: String() = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// TestCapNames checks that every name table has one entry per bit, in
// ascending order, so that String prints each bit once and lowest first.
func TestCapNames(t *testing.T) {
	for name, tab := range map[string][]bitName{
		"DeviceCap":    deviceCapNames[:],
		"PortCap":      portCapNames[:],
		"ODPGeneral":   odpGeneralNames[:],
		"ODPTransport": odpTransportNames[:],
		"RawPacketCap": rawPacketCapNames[:],
	} {
		var prev uint64
		for _, n := range tab {
			if n.bit == 0 || n.bit&(n.bit-1) != 0 || n.bit <= prev || n.name == "" {
				t.Errorf("%s: entry %#x %q: want one bit, above %#x, and a name", name, n.bit, n.name, prev)
			}
			prev = n.bit
		}
	}
}

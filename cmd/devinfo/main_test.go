package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/uverbs"
)

// rxePort is port 1 of an rxe device on a veth, as the VM has it.
var rxePort = uverbs.PortAttr{
	State: uverbs.PortActive, MaxMTU: uverbs.MTU4096, ActiveMTU: uverbs.MTU1024,
	GIDTblLen: 1024, PortCapFlags: 0x00010000, MaxMsgSz: 0x800000,
	PKeyTblLen: 1, MaxVLNum: 1, ActiveWidth: 2, ActiveSpeed: 1, PhysState: 5,
	LinkLayer: uverbs.LinkLayerEthernet,
}

var rxeAttr = uverbs.DeviceAttr{
	FWVer: "0.0.0", NodeGUID: 0x748f8ffffe91968a, SysImageGUID: 0x748f8ffffe91968a,
	VendorID: 0xffffff, PhysPortCnt: 1,
}

func TestPrintDevice(t *testing.T) {
	verboseAttr := rxeAttr
	verboseAttr.MaxMRSize = 0xffffffffffffffff
	verboseAttr.PageSizeCap = 0xfffff000
	verboseAttr.MaxQP = 1048560
	verboseAttr.MaxQPWR = 1048576
	verboseAttr.DeviceCapFlags = 1<<34 | 1<<40 | 1<<31 | 1<<21 | 1<<1 | 1<<0
	verboseAttr.MaxSGE = 32
	verboseAttr.MaxSGERD = 32
	verboseAttr.MaxCQ = 1048576
	verboseAttr.MaxCQE = 32767
	verboseAttr.MaxMR = 524288
	verboseAttr.MaxPD = 1048576
	verboseAttr.MaxQPRdAtom = 128
	verboseAttr.MaxResRdAtom = 258048
	verboseAttr.MaxQPInitRdAtom = 128
	verboseAttr.AtomicCap = uverbs.AtomicHCA
	verboseAttr.MaxMW = 524287
	verboseAttr.MaxMcastGrp = 8192
	verboseAttr.MaxAH = 32768
	verboseAttr.MaxSRQ = 917504
	verboseAttr.MaxSRQWR = 1048576
	verboseAttr.MaxSRQSGE = 27
	verboseAttr.MaxPKeys = 64
	verboseAttr.LocalCAAckDelay = 15
	verboseAttr.MaxMcastQPAttach = 56
	verboseAttr.MaxTotalMcastQPAttach = 458752

	// Values rxe and siw leave zero, to reach every branch.
	capsAttr := uverbs.DeviceAttr{
		PhysPortCnt: 1, MaxEERdAtom: 1, MaxEEInitRdAtom: 2, MaxEE: 3, MaxRDD: 4,
		MaxRawIPv6QP: 5, MaxRawEthyQP: 6, MaxMcastQPAttach: 7, MaxTotalMcastQPAttach: 8,
		MaxFMR: 9, MaxMapPerFMR: 10,
		ODPGeneralCaps: 0x83, ODPRCCaps: 0x7f, ODPUCCaps: 1, ODPUDCaps: 2, ODPXRCCaps: 0x20,
		CompletionTimestampMask: 0xffff, HCACoreClock: 156250, RawPacketCaps: 0xf,
		RSSSupportedQPTs: 1<<8 | 1<<4 | 1<<2, MaxRWQIndirectionTables: 64, MaxRWQIndirectionTableSize: 2048,
		MaxWQTypeRQ: 16, TMMaxRndvHdrSize: 64, TMMaxNumTags: 127, TMFlags: 1, TMMaxOps: 32768, TMMaxSGE: 1,
		MaxCQModerationCount: 65535, MaxCQModerationPeriod: 4095, MaxDMSize: 131072,
	}
	rxeGIDs := []gidLine{
		{Index: 0, GID: uverbs.GID{0xfe, 0x80, 8: 0x44, 0xec, 0xfe, 0xff, 0xfe, 0xd7, 0xd4, 0x87}, Type: uverbs.GIDTypeRoCEv2},
		{Index: 1, GID: uverbs.GID{10: 0xff, 0xff, 192, 168, 77, 1}, Type: uverbs.GIDTypeRoCEv2},
		{Index: 2, GID: uverbs.GID{0xfe, 0x80, 8: 0x44, 0xec, 0xfe, 0xff, 0xfe, 0xd7, 0xd4, 0x87}, Type: uverbs.GIDTypeRoCEv1},
		{Index: 17, GID: uverbs.GID{12: 10, 0, 0, 1}, Type: uverbs.GIDTypeRoCEv2},
	}

	tests := []struct {
		name    string
		info    deviceInfo
		verbose bool
		want    string
	}{{
		name: "rxe",
		info: deviceInfo{Name: "rxe0", Transport: transportIB, Attr: rxeAttr,
			Ports: []portInfo{{Num: 1, Attr: rxePort}}},
		// Real output of rdma-core's ibv_devinfo in the test VM.
		want: "hca_id:\trxe0\n" +
			"\ttransport:\t\t\tInfiniBand (0)\n" +
			"\tfw_ver:\t\t\t\t0.0.0\n" +
			"\tnode_guid:\t\t\t748f:8fff:fe91:968a\n" +
			"\tsys_image_guid:\t\t\t748f:8fff:fe91:968a\n" +
			"\tvendor_id:\t\t\t0xffffff\n" +
			"\tvendor_part_id:\t\t\t0\n" +
			"\thw_ver:\t\t\t\t0x0\n" +
			"\tphys_port_cnt:\t\t\t1\n" +
			"\t\tport:\t1\n" +
			"\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n" +
			"\t\t\tmax_mtu:\t\t4096 (5)\n" +
			"\t\t\tactive_mtu:\t\t1024 (3)\n" +
			"\t\t\tsm_lid:\t\t\t0\n" +
			"\t\t\tport_lid:\t\t0\n" +
			"\t\t\tport_lmc:\t\t0x00\n" +
			"\t\t\tlink_layer:\t\tEthernet\n" +
			"\n",
	}, {
		name: "iwarp, board id, two ports, odd values",
		info: deviceInfo{Name: "siw0", Transport: transportIWARP, BoardID: "MT_0000000010",
			Attr: uverbs.DeviceAttr{FWVer: "", NodeGUID: 0x0102030405060708, SysImageGUID: 1,
				VendorID: 0x626d74, VendorPartID: 0xffffffff, HWVer: 0xab, PhysPortCnt: 2},
			Ports: []portInfo{
				{Num: 1, Attr: uverbs.PortAttr{State: uverbs.PortDown, MaxMTU: 0, ActiveMTU: 7, SMLID: 3, LID: 65535, LMC: 0x7, LinkLayer: uverbs.LinkLayerUnspecified}},
				{Num: 2, Attr: uverbs.PortAttr{State: uverbs.PortNop, MaxMTU: uverbs.MTU256, ActiveMTU: uverbs.MTU2048, LinkLayer: 9}},
			}},
		want: "hca_id:\tsiw0\n" +
			"\ttransport:\t\t\tiWARP (1)\n" +
			"\tnode_guid:\t\t\t0102:0304:0506:0708\n" +
			"\tsys_image_guid:\t\t\t0000:0000:0000:0001\n" +
			"\tvendor_id:\t\t\t0x626d74\n" +
			"\tvendor_part_id:\t\t\t-1\n" +
			"\thw_ver:\t\t\t\t0xAB\n" +
			"\tboard_id:\t\t\tMT_0000000010\n" +
			"\tphys_port_cnt:\t\t\t2\n" +
			"\t\tport:\t1\n" +
			"\t\t\tstate:\t\t\tPORT_DOWN (1)\n" +
			"\t\t\tmax_mtu:\t\tinvalid MTU (0)\n" +
			"\t\t\tactive_mtu:\t\tinvalid MTU (7)\n" +
			"\t\t\tsm_lid:\t\t\t3\n" +
			"\t\t\tport_lid:\t\t65535\n" +
			"\t\t\tport_lmc:\t\t0x07\n" +
			"\t\t\tlink_layer:\t\tInfiniBand\n" +
			"\n" +
			"\t\tport:\t2\n" +
			"\t\t\tstate:\t\t\tinvalid state (0)\n" +
			"\t\t\tmax_mtu:\t\t256 (1)\n" +
			"\t\t\tactive_mtu:\t\t2048 (4)\n" +
			"\t\t\tsm_lid:\t\t\t0\n" +
			"\t\t\tport_lid:\t\t0\n" +
			"\t\t\tport_lmc:\t\t0x00\n" +
			"\t\t\tlink_layer:\t\tUnknown\n" +
			"\n",
	}, {
		name: "no ports",
		info: deviceInfo{Name: "x", Transport: transportUnspecified, Attr: uverbs.DeviceAttr{FWVer: "1.2.3"}},
		want: "hca_id:\tx\n" +
			"\ttransport:\t\t\tinvalid transport (4)\n" +
			"\tfw_ver:\t\t\t\t1.2.3\n" +
			"\tnode_guid:\t\t\t0000:0000:0000:0000\n" +
			"\tsys_image_guid:\t\t\t0000:0000:0000:0000\n" +
			"\tvendor_id:\t\t\t0x0000\n" +
			"\tvendor_part_id:\t\t\t0\n" +
			"\thw_ver:\t\t\t\t0x0\n" +
			"\tphys_port_cnt:\t\t\t0\n",
	}, {
		name:    "verbose",
		verbose: true,
		info: deviceInfo{Name: "rxe0", Transport: transportIB, Attr: verboseAttr, CompVecs: 4,
			Ports: []portInfo{{Num: 1, Attr: rxePort, GIDs: rxeGIDs}}},
		want: "hca_id:\trxe0\n" +
			"\ttransport:\t\t\tInfiniBand (0)\n" +
			"\tfw_ver:\t\t\t\t0.0.0\n" +
			"\tnode_guid:\t\t\t748f:8fff:fe91:968a\n" +
			"\tsys_image_guid:\t\t\t748f:8fff:fe91:968a\n" +
			"\tvendor_id:\t\t\t0xffffff\n" +
			"\tvendor_part_id:\t\t\t0\n" +
			"\thw_ver:\t\t\t\t0x0\n" +
			"\tphys_port_cnt:\t\t\t1\n" +
			"\tmax_mr_size:\t\t\t0xffffffffffffffff\n" +
			"\tpage_size_cap:\t\t\t0xfffff000\n" +
			"\tmax_qp:\t\t\t\t1048560\n" +
			"\tmax_qp_wr:\t\t\t1048576\n" +
			"\tdevice_cap_flags:\t\t0x80200003\n" +
			"\t\t\t\t\tRESIZE_MAX_WR\n" +
			"\t\t\t\t\tBAD_PKEY_CNTR\n" +
			"\t\t\t\t\tMEM_MGT_EXTENSIONS\n" +
			"\t\t\t\t\tUnknown flags: 0x80000000\n" +
			"\tmax_sge:\t\t\t32\n" +
			"\tmax_sge_rd:\t\t\t32\n" +
			"\tmax_cq:\t\t\t\t1048576\n" +
			"\tmax_cqe:\t\t\t32767\n" +
			"\tmax_mr:\t\t\t\t524288\n" +
			"\tmax_pd:\t\t\t\t1048576\n" +
			"\tmax_qp_rd_atom:\t\t\t128\n" +
			"\tmax_ee_rd_atom:\t\t\t0\n" +
			"\tmax_res_rd_atom:\t\t258048\n" +
			"\tmax_qp_init_rd_atom:\t\t128\n" +
			"\tmax_ee_init_rd_atom:\t\t0\n" +
			"\tatomic_cap:\t\t\tATOMIC_HCA (1)\n" +
			"\tmax_ee:\t\t\t\t0\n" +
			"\tmax_rdd:\t\t\t0\n" +
			"\tmax_mw:\t\t\t\t524287\n" +
			"\tmax_raw_ipv6_qp:\t\t0\n" +
			"\tmax_raw_ethy_qp:\t\t0\n" +
			"\tmax_mcast_grp:\t\t\t8192\n" +
			"\tmax_mcast_qp_attach:\t\t56\n" +
			"\tmax_total_mcast_qp_attach:\t458752\n" +
			"\tmax_ah:\t\t\t\t32768\n" +
			"\tmax_fmr:\t\t\t0\n" +
			"\tmax_srq:\t\t\t917504\n" +
			"\tmax_srq_wr:\t\t\t1048576\n" +
			"\tmax_srq_sge:\t\t\t27\n" +
			"\tmax_pkeys:\t\t\t64\n" +
			"\tlocal_ca_ack_delay:\t\t15\n" +
			"\tgeneral_odp_caps:\n" +
			"\trc_odp_caps:\n" +
			"\t\t\t\t\tNO SUPPORT\n" +
			"\tuc_odp_caps:\n" +
			"\t\t\t\t\tNO SUPPORT\n" +
			"\tud_odp_caps:\n" +
			"\t\t\t\t\tNO SUPPORT\n" +
			"\txrc_odp_caps:\n" +
			"\t\t\t\t\tNO SUPPORT\n" +
			"\tcompletion_timestamp_mask not supported\n" +
			"\tcore clock not supported\n" +
			"\tdevice_cap_flags_ex:\t\t0x10480200003\n" +
			"\t\t\t\t\tRAW_SCATTER_FCS\n" +
			"\t\t\t\t\tUnknown flags: 0x10000000000\n" +
			"\ttso_caps:\n" +
			"\tmax_tso:\t\t\t0\n" +
			"\trss_caps:\n" +
			"\t\tmax_rwq_indirection_tables:\t\t\t0\n" +
			"\t\tmax_rwq_indirection_table_size:\t\t\t0\n" +
			"\t\trx_hash_function:\t\t\t\t0x0\n" +
			"\t\trx_hash_fields_mask:\t\t\t\t0x0\n" +
			"\tmax_wq_type_rq:\t\t\t0\n" +
			"\tpacket_pacing_caps:\n" +
			"\t\tqp_rate_limit_min:\t0kbps\n" +
			"\t\tqp_rate_limit_max:\t0kbps\n" +
			"\ttag matching not supported\n" +
			"\tnum_comp_vectors:\t\t4\n" +
			"\t\tport:\t1\n" +
			"\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n" +
			"\t\t\tmax_mtu:\t\t4096 (5)\n" +
			"\t\t\tactive_mtu:\t\t1024 (3)\n" +
			"\t\t\tsm_lid:\t\t\t0\n" +
			"\t\t\tport_lid:\t\t0\n" +
			"\t\t\tport_lmc:\t\t0x00\n" +
			"\t\t\tlink_layer:\t\tEthernet\n" +
			"\t\t\tmax_msg_sz:\t\t0x800000\n" +
			"\t\t\tport_cap_flags:\t\t0x00010000\n" +
			"\t\t\tport_cap_flags2:\t0x0000\n" +
			"\t\t\tmax_vl_num:\t\t1 (1)\n" +
			"\t\t\tbad_pkey_cntr:\t\t0x0\n" +
			"\t\t\tqkey_viol_cntr:\t\t0x0\n" +
			"\t\t\tsm_sl:\t\t\t0\n" +
			"\t\t\tpkey_tbl_len:\t\t1\n" +
			"\t\t\tgid_tbl_len:\t\t1024\n" +
			"\t\t\tsubnet_timeout:\t\t0\n" +
			"\t\t\tinit_type_reply:\t0\n" +
			"\t\t\tactive_width:\t\t4X (2)\n" +
			"\t\t\tactive_speed:\t\t2.5 Gbps (1)\n" +
			"\t\t\tphys_state:\t\tLINK_UP (5)\n" +
			"\t\t\tGID[  0]:\t\tfe80::44ec:feff:fed7:d487, RoCE v2\n" +
			"\t\t\tGID[  1]:\t\t::ffff:192.168.77.1, RoCE v2\n" +
			"\t\t\tGID[  2]:\t\tfe80:0000:0000:0000:44ec:feff:fed7:d487, RoCE v1\n" +
			"\t\t\tGID[ 17]:\t\t::10.0.0.1, RoCE v2\n" +
			"\n",
	}, {
		name:    "verbose, every optional capability",
		verbose: true,
		info: deviceInfo{Name: "mlx", Transport: transportIWARP, Attr: capsAttr,
			Ports: []portInfo{{Num: 1, Attr: uverbs.PortAttr{LinkLayer: uverbs.LinkLayerInfiniBand, PortCapFlags2: 0x12},
				GIDs: []gidLine{{Index: 3, GID: uverbs.GID{0xfe, 0x80, 15: 1}}}}}},
		want: "hca_id:\tmlx\n" +
			"\ttransport:\t\t\tiWARP (1)\n" +
			"\tnode_guid:\t\t\t0000:0000:0000:0000\n" +
			"\tsys_image_guid:\t\t\t0000:0000:0000:0000\n" +
			"\tvendor_id:\t\t\t0x0000\n" +
			"\tvendor_part_id:\t\t\t0\n" +
			"\thw_ver:\t\t\t\t0x0\n" +
			"\tphys_port_cnt:\t\t\t1\n" +
			"\tmax_mr_size:\t\t\t0x0\n" +
			"\tpage_size_cap:\t\t\t0x0\n" +
			"\tmax_qp:\t\t\t\t0\n" +
			"\tmax_qp_wr:\t\t\t0\n" +
			"\tdevice_cap_flags:\t\t0x00000000\n" +
			"\tmax_sge:\t\t\t0\n" +
			"\tmax_sge_rd:\t\t\t0\n" +
			"\tmax_cq:\t\t\t\t0\n" +
			"\tmax_cqe:\t\t\t0\n" +
			"\tmax_mr:\t\t\t\t0\n" +
			"\tmax_pd:\t\t\t\t0\n" +
			"\tmax_qp_rd_atom:\t\t\t0\n" +
			"\tmax_ee_rd_atom:\t\t\t1\n" +
			"\tmax_res_rd_atom:\t\t0\n" +
			"\tmax_qp_init_rd_atom:\t\t0\n" +
			"\tmax_ee_init_rd_atom:\t\t2\n" +
			"\tatomic_cap:\t\t\tATOMIC_NONE (0)\n" +
			"\tmax_ee:\t\t\t\t3\n" +
			"\tmax_rdd:\t\t\t4\n" +
			"\tmax_mw:\t\t\t\t0\n" +
			"\tmax_raw_ipv6_qp:\t\t5\n" +
			"\tmax_raw_ethy_qp:\t\t6\n" +
			"\tmax_mcast_grp:\t\t\t0\n" +
			"\tmax_mcast_qp_attach:\t\t7\n" +
			"\tmax_total_mcast_qp_attach:\t8\n" +
			"\tmax_ah:\t\t\t\t0\n" +
			"\tmax_fmr:\t\t\t9\n" +
			"\tmax_map_per_fmr:\t\t10\n" +
			"\tmax_srq:\t\t\t0\n" +
			"\tmax_pkeys:\t\t\t0\n" +
			"\tlocal_ca_ack_delay:\t\t0\n" +
			"\tgeneral_odp_caps:\n" +
			"\t\t\t\t\tODP_SUPPORT\n" +
			"\t\t\t\t\tODP_SUPPORT_IMPLICIT\n" +
			"\t\t\t\t\tUnknown flags: 0x80\n" +
			"\trc_odp_caps:\n" +
			"\t\t\t\t\tSUPPORT_SEND\n" +
			"\t\t\t\t\tSUPPORT_RECV\n" +
			"\t\t\t\t\tSUPPORT_WRITE\n" +
			"\t\t\t\t\tSUPPORT_READ\n" +
			"\t\t\t\t\tSUPPORT_ATOMIC\n" +
			"\t\t\t\t\tSUPPORT_SRQ\n" +
			"\t\t\t\t\tUnknown flags: 0x40\n" +
			"\tuc_odp_caps:\n" +
			"\t\t\t\t\tSUPPORT_SEND\n" +
			"\tud_odp_caps:\n" +
			"\t\t\t\t\tSUPPORT_RECV\n" +
			"\txrc_odp_caps:\n" +
			"\t\t\t\t\tSUPPORT_SRQ\n" +
			"\tcompletion timestamp_mask:\t\t\t0x000000000000ffff\n" +
			"\thca_core_clock:\t\t\t156250kHZ\n" +
			"\traw packet caps:\n" +
			"\t\t\t\t\tC-VLAN stripping offload\n" +
			"\t\t\t\t\tScatter FCS offload\n" +
			"\t\t\t\t\tIP csum offload\n" +
			"\t\t\t\t\tDelay drop\n" +
			"\tdevice_cap_flags_ex:\t\t0x0\n" +
			"\ttso_caps:\n" +
			"\tmax_tso:\t\t\t0\n" +
			"\trss_caps:\n" +
			"\t\tmax_rwq_indirection_tables:\t\t\t64\n" +
			"\t\tmax_rwq_indirection_table_size:\t\t\t2048\n" +
			"\t\trx_hash_function:\t\t\t\t0x0\n" +
			"\t\trx_hash_fields_mask:\t\t\t\t0x0\n" +
			"\t\tsupported_qp:\n" +
			"\t\t\t\t\tSUPPORT_RAW_PACKET\n" +
			"\t\t\t\t\tSUPPORT_UD\n" +
			"\t\t\t\t\tUnknown flags: 0x4\n" +
			"\tmax_wq_type_rq:\t\t\t16\n" +
			"\tpacket_pacing_caps:\n" +
			"\t\tqp_rate_limit_min:\t0kbps\n" +
			"\t\tqp_rate_limit_max:\t0kbps\n" +
			"\tmax_rndv_hdr_size:\t\t64\n" +
			"\tmax_num_tags:\t\t\t127\n" +
			"\tmax_ops:\t\t\t32768\n" +
			"\tmax_sge:\t\t\t1\n" +
			"\tflags:\n" +
			"\t\t\t\t\tIBV_TM_CAP_RC\n" +
			"\n\tcq moderation caps:\n" +
			"\t\tmax_cq_count:\t65535\n" +
			"\t\tmax_cq_period:\t4095 us\n\n" +
			"\tmaximum available device memory:\t131072Bytes\n\n" +
			"\tnum_comp_vectors:\t\t0\n" +
			"\t\tport:\t1\n" +
			"\t\t\tstate:\t\t\tinvalid state (0)\n" +
			"\t\t\tmax_mtu:\t\tinvalid MTU (0)\n" +
			"\t\t\tactive_mtu:\t\tinvalid MTU (0)\n" +
			"\t\t\tsm_lid:\t\t\t0\n" +
			"\t\t\tport_lid:\t\t0\n" +
			"\t\t\tport_lmc:\t\t0x00\n" +
			"\t\t\tlink_layer:\t\tInfiniBand\n" +
			"\t\t\tmax_msg_sz:\t\t0x0\n" +
			"\t\t\tport_cap_flags:\t\t0x00000000\n" +
			"\t\t\tport_cap_flags2:\t0x0012\n" +
			"\t\t\tmax_vl_num:\t\tinvalid value (0)\n" +
			"\t\t\tbad_pkey_cntr:\t\t0x0\n" +
			"\t\t\tqkey_viol_cntr:\t\t0x0\n" +
			"\t\t\tsm_sl:\t\t\t0\n" +
			"\t\t\tpkey_tbl_len:\t\t0\n" +
			"\t\t\tgid_tbl_len:\t\t0\n" +
			"\t\t\tsubnet_timeout:\t\t0\n" +
			"\t\t\tinit_type_reply:\t0\n" +
			"\t\t\tactive_width:\t\tinvalid widthX (0)\n" +
			"\t\t\tactive_speed:\t\tinvalid speed (0)\n" +
			"\t\t\tGID[  3]:\t\tfe80:0000:0000:0000:0000:0000:0000:0001\n" +
			"\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := printDevice(&b, &tt.info, tt.verbose); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("printDevice output differs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrintList(t *testing.T) {
	for _, tt := range []struct {
		names []string
		want  string
	}{
		{nil, "0 HCAs found:\n\n"},
		{[]string{"rxe0"}, "1 HCA found:\n\trxe0\n\n"},
		{[]string{"rxe0", "siw0"}, "2 HCAs found:\n\trxe0\n\tsiw0\n\n"},
	} {
		var b bytes.Buffer
		if err := printList(&b, tt.names); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, b.String()); diff != "" {
			t.Errorf("printList(%q) differs (-want +got):\n%s", tt.names, diff)
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-i", "0"}, {"-i", "-1"}, {"-x"}, {"extra"}} {
		if err := run(&bytes.Buffer{}, args); err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
	}
}

// cOutput runs rdma-core's ibv_devinfo with args.
func cOutput(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(testenv.CTool(t, "ibv_devinfo"), args...).Output()
	if err != nil {
		t.Fatalf("C ibv_devinfo %q: %v", args, err)
	}
	return string(out)
}

// goOutput runs our devinfo with args.
func goOutput(t *testing.T, args ...string) string {
	t.Helper()
	var b bytes.Buffer
	if err := run(&b, args); err != nil {
		t.Fatalf("devinfo %q: %v\n%s", args, err, b.String())
	}
	return b.String()
}

// TestMatchesC compares our output with rdma-core's ibv_devinfo on the same
// devices: byte for byte without -v, and with -v key by key, every key C
// prints included.
func TestMatchesC(t *testing.T) {
	devs := testenv.Devices(t)
	// -l lists in libibverbs's order, which need not be ours; compare sets.
	cList, goList := cOutput(t, "-l"), goOutput(t, "-l")
	sortLines := func(s string) []string {
		l := strings.Split(s, "\n")
		slices.Sort(l)
		return l
	}
	if diff := cmp.Diff(sortLines(cList), sortLines(goList)); diff != "" {
		t.Errorf("-l output differs from C (-C +Go):\n%s", diff)
	}
	for _, d := range devs {
		if !strings.Contains(goList, "\t"+d.Name+"\n") {
			t.Errorf("-l does not list %s:\n%s", d.Name, goList)
		}
	}

	for _, d := range devs {
		t.Run(d.Name, func(t *testing.T) {
			for _, args := range [][]string{{"-d", d.Name}, {"-d", d.Name, "-i", "1"}} {
				want, got := cOutput(t, args...), goOutput(t, args...)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("devinfo %q differs from C (-C +Go):\n%s", args, diff)
				}
			}

			args := []string{"-d", d.Name, "-v"}
			cv, gv := parseKV(cOutput(t, args...)), parseKV(goOutput(t, args...))
			common := 0
			for k, g := range gv {
				c, ok := cv[k]
				if !ok {
					t.Errorf("-v: we print %q, C does not", k)
					continue
				}
				common++
				if c != g {
					t.Errorf("-v: %s = %q, C says %q", k, g, c)
				}
			}
			var onlyC []string
			for k := range cv {
				if _, ok := gv[k]; !ok {
					onlyC = append(onlyC, k)
				}
			}
			t.Logf("-v: %d keys compared", common)
			if len(onlyC) > 0 {
				slices.Sort(onlyC)
				t.Errorf("-v: only C prints %d keys: %q", len(onlyC), onlyC)
			}
			if common < 40 {
				t.Errorf("-v: only %d keys in common", common)
			}
		})
	}
}

// parseKV reads "key:<tabs>value" lines of ibv_devinfo output into a map.
// Keys under a port are prefixed with it ("port 1/state") since every port
// repeats them; the first occurrence of a key wins. Lines without a colon
// (flag names, "... not supported") are skipped.
func parseKV(out string) map[string]string {
	m := map[string]string{}
	port := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "hca_id":
			port = ""
		case "port":
			port = "port " + v + "/"
			continue
		}
		if _, dup := m[port+k]; !dup {
			m[port+k] = v
		}
	}
	return m
}

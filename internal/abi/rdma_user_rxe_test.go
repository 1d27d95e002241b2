// Layout and constant tests for rdma_user_rxe.h. The expected numbers in the
// tables were printed by the C compiler from the Linux 6.1 headers; do not
// compute them by hand. abi_test.go says how, and why they hold on arm64.
// The wr.flush rows (and the offset of dma.atomic_wr, 24 in rxe_dma_info and
// 208 in rxe_send_wqe, the same as sge[]) were printed the same way by gcc
// 12.2 from rdma-core v45.0's kernel-headers/rdma/rdma_user_rxe.h, the
// Linux 6.2 uapi, which Linux 6.12 keeps.

package abi

import (
	"testing"
	"unsafe"
)

func TestRDMAUserRxeLayout(t *testing.T) {
	checkLayouts(t, []layout{
		{"union rxe_gid", unsafe.Sizeof(RxeGID{}), 16, nil},
		{"struct rxe_global_route", unsafe.Sizeof(RxeGlobalRoute{}), 24, []offset{
			{"dgid", unsafe.Offsetof(RxeGlobalRoute{}.DGID), 0},
			{"flow_label", unsafe.Offsetof(RxeGlobalRoute{}.FlowLabel), 16},
			{"sgid_index", unsafe.Offsetof(RxeGlobalRoute{}.SGIDIndex), 20},
			{"hop_limit", unsafe.Offsetof(RxeGlobalRoute{}.HopLimit), 21},
			{"traffic_class", unsafe.Offsetof(RxeGlobalRoute{}.TrafficClass), 22},
		}},
		{"struct rxe_av", unsafe.Sizeof(RxeAV{}), 88, []offset{
			{"port_num", unsafe.Offsetof(RxeAV{}.PortNum), 0},
			{"network_type", unsafe.Offsetof(RxeAV{}.NetworkType), 1},
			{"dmac", unsafe.Offsetof(RxeAV{}.DMAC), 2},
			{"grh", unsafe.Offsetof(RxeAV{}.GRH), 8},
			{"sgid_addr", unsafe.Offsetof(RxeAV{}.SGIDAddr), 32},
			{"dgid_addr", unsafe.Offsetof(RxeAV{}.DGIDAddr), 60},
		}},
		{"struct rxe_send_wr", unsafe.Sizeof(RxeSendWr{}), 144, []offset{
			{"wr_id", unsafe.Offsetof(RxeSendWr{}.WrID), 0},
			{"reserved", unsafe.Offsetof(RxeSendWr{}.Reserved), 8},
			{"opcode", unsafe.Offsetof(RxeSendWr{}.Opcode), 12},
			{"send_flags", unsafe.Offsetof(RxeSendWr{}.SendFlags), 16},
			{"ex", unsafe.Offsetof(RxeSendWr{}.Ex), 20},
			{"wr", unsafe.Offsetof(RxeSendWr{}.Wr), 24},
		}},
		{"struct rxe_send_wr, member wr.flush", unsafe.Sizeof(RxeSendWrFlush{}), 24, []offset{
			{"remote_addr", unsafe.Offsetof(RxeSendWrFlush{}.RemoteAddr), 0},
			{"length", unsafe.Offsetof(RxeSendWrFlush{}.Length), 8},
			{"rkey", unsafe.Offsetof(RxeSendWrFlush{}.RKey), 12},
			{"type", unsafe.Offsetof(RxeSendWrFlush{}.Type), 16},
			{"level", unsafe.Offsetof(RxeSendWrFlush{}.Level), 17},
		}},
		{"struct rxe_send_wr, member wr.rdma", unsafe.Sizeof(RxeSendWrRDMA{}), 16, []offset{
			{"remote_addr", unsafe.Offsetof(RxeSendWrRDMA{}.RemoteAddr), 0},
			{"rkey", unsafe.Offsetof(RxeSendWrRDMA{}.RKey), 8},
			{"reserved", unsafe.Offsetof(RxeSendWrRDMA{}.Reserved), 12},
		}},
		{"struct rxe_send_wr, member wr.atomic", unsafe.Sizeof(RxeSendWrAtomic{}), 32, []offset{
			{"remote_addr", unsafe.Offsetof(RxeSendWrAtomic{}.RemoteAddr), 0},
			{"compare_add", unsafe.Offsetof(RxeSendWrAtomic{}.CompareAdd), 8},
			{"swap", unsafe.Offsetof(RxeSendWrAtomic{}.Swap), 16},
			{"rkey", unsafe.Offsetof(RxeSendWrAtomic{}.RKey), 24},
			{"reserved", unsafe.Offsetof(RxeSendWrAtomic{}.Reserved), 28},
		}},
		{"struct rxe_send_wr, member wr.ud", unsafe.Sizeof(RxeSendWrUD{}), 120, []offset{
			{"remote_qpn", unsafe.Offsetof(RxeSendWrUD{}.RemoteQPN), 0},
			{"remote_qkey", unsafe.Offsetof(RxeSendWrUD{}.RemoteQKey), 4},
			{"pkey_index", unsafe.Offsetof(RxeSendWrUD{}.PKeyIndex), 8},
			{"reserved", unsafe.Offsetof(RxeSendWrUD{}.Reserved), 10},
			{"ah_num", unsafe.Offsetof(RxeSendWrUD{}.AHNum), 12},
			{"pad", unsafe.Offsetof(RxeSendWrUD{}.Pad), 16},
			{"av", unsafe.Offsetof(RxeSendWrUD{}.AV), 32},
		}},
		{"struct rxe_send_wr, member wr.mw", unsafe.Sizeof(RxeSendWrMW{}), 32, []offset{
			{"addr", unsafe.Offsetof(RxeSendWrMW{}.Addr), 0},
			{"length", unsafe.Offsetof(RxeSendWrMW{}.Length), 8},
			{"mr_lkey", unsafe.Offsetof(RxeSendWrMW{}.MRLKey), 16},
			{"mw_rkey", unsafe.Offsetof(RxeSendWrMW{}.MWRKey), 20},
			{"rkey", unsafe.Offsetof(RxeSendWrMW{}.RKey), 24},
			{"access", unsafe.Offsetof(RxeSendWrMW{}.Access), 28},
		}},
		{"struct rxe_sge", unsafe.Sizeof(RxeSGE{}), 16, []offset{
			{"addr", unsafe.Offsetof(RxeSGE{}.Addr), 0},
			{"length", unsafe.Offsetof(RxeSGE{}.Length), 8},
			{"lkey", unsafe.Offsetof(RxeSGE{}.LKey), 12},
		}},
		{"struct mminfo", unsafe.Sizeof(MMInfo{}), 16, []offset{
			{"offset", unsafe.Offsetof(MMInfo{}.Offset), 0},
			{"size", unsafe.Offsetof(MMInfo{}.Size), 8},
			{"pad", unsafe.Offsetof(MMInfo{}.Pad), 12},
		}},
		{"struct rxe_dma_info", unsafe.Sizeof(RxeDMAInfo{}), 24, []offset{
			{"length", unsafe.Offsetof(RxeDMAInfo{}.Length), 0},
			{"resid", unsafe.Offsetof(RxeDMAInfo{}.Resid), 4},
			{"cur_sge", unsafe.Offsetof(RxeDMAInfo{}.CurSGE), 8},
			{"num_sge", unsafe.Offsetof(RxeDMAInfo{}.NumSGE), 12},
			{"sge_offset", unsafe.Offsetof(RxeDMAInfo{}.SGEOffset), 16},
			{"reserved", unsafe.Offsetof(RxeDMAInfo{}.Reserved), 20},
		}},
		{"struct rxe_send_wqe", unsafe.Sizeof(RxeSendWQE{}), 208, []offset{
			{"wr", unsafe.Offsetof(RxeSendWQE{}.Wr), 0},
			{"status", unsafe.Offsetof(RxeSendWQE{}.Status), 144},
			{"state", unsafe.Offsetof(RxeSendWQE{}.State), 148},
			{"iova", unsafe.Offsetof(RxeSendWQE{}.Iova), 152},
			{"mask", unsafe.Offsetof(RxeSendWQE{}.Mask), 160},
			{"first_psn", unsafe.Offsetof(RxeSendWQE{}.FirstPSN), 164},
			{"last_psn", unsafe.Offsetof(RxeSendWQE{}.LastPSN), 168},
			{"ack_length", unsafe.Offsetof(RxeSendWQE{}.AckLength), 172},
			{"ssn", unsafe.Offsetof(RxeSendWQE{}.SSN), 176},
			{"has_rd_atomic", unsafe.Offsetof(RxeSendWQE{}.HasRdAtomic), 180},
			{"dma", unsafe.Offsetof(RxeSendWQE{}.Dma), 184},
		}},
		{"struct rxe_recv_wqe", unsafe.Sizeof(RxeRecvWQE{}), 40, []offset{
			{"wr_id", unsafe.Offsetof(RxeRecvWQE{}.WrID), 0},
			{"reserved", unsafe.Offsetof(RxeRecvWQE{}.Reserved), 8},
			{"padding", unsafe.Offsetof(RxeRecvWQE{}.Padding), 12},
			{"dma", unsafe.Offsetof(RxeRecvWQE{}.Dma), 16},
		}},
		{"struct rxe_create_ah_resp", unsafe.Sizeof(RxeCreateAHResp{}), 8, []offset{
			{"ah_num", unsafe.Offsetof(RxeCreateAHResp{}.AHNum), 0},
			{"reserved", unsafe.Offsetof(RxeCreateAHResp{}.Reserved), 4},
		}},
		{"struct rxe_create_cq_resp", unsafe.Sizeof(RxeCreateCQResp{}), 16, []offset{
			{"mi", unsafe.Offsetof(RxeCreateCQResp{}.MI), 0},
		}},
		{"struct rxe_resize_cq_resp", unsafe.Sizeof(RxeResizeCQResp{}), 16, []offset{
			{"mi", unsafe.Offsetof(RxeResizeCQResp{}.MI), 0},
		}},
		{"struct rxe_create_qp_resp", unsafe.Sizeof(RxeCreateQPResp{}), 32, []offset{
			{"rq_mi", unsafe.Offsetof(RxeCreateQPResp{}.RQMI), 0},
			{"sq_mi", unsafe.Offsetof(RxeCreateQPResp{}.SQMI), 16},
		}},
		{"struct rxe_create_srq_resp", unsafe.Sizeof(RxeCreateSRQResp{}), 24, []offset{
			{"mi", unsafe.Offsetof(RxeCreateSRQResp{}.MI), 0},
			{"srq_num", unsafe.Offsetof(RxeCreateSRQResp{}.SRQNum), 16},
			{"reserved", unsafe.Offsetof(RxeCreateSRQResp{}.Reserved), 20},
		}},
		{"struct rxe_modify_srq_cmd", unsafe.Sizeof(RxeModifySRQCmd{}), 8, []offset{
			{"mmap_info_addr", unsafe.Offsetof(RxeModifySRQCmd{}.MmapInfoAddr), 0},
		}},
		{"struct rxe_queue_buf", unsafe.Sizeof(RxeQueueBuf{}), 384, []offset{
			{"log2_elem_size", unsafe.Offsetof(RxeQueueBuf{}.Log2ElemSize), 0},
			{"index_mask", unsafe.Offsetof(RxeQueueBuf{}.IndexMask), 4},
			{"pad_1", unsafe.Offsetof(RxeQueueBuf{}.Pad1), 8},
			{"producer_index", unsafe.Offsetof(RxeQueueBuf{}.ProducerIndex), 128},
			{"pad_2", unsafe.Offsetof(RxeQueueBuf{}.Pad2), 132},
			{"consumer_index", unsafe.Offsetof(RxeQueueBuf{}.ConsumerIndex), 256},
			{"pad_3", unsafe.Offsetof(RxeQueueBuf{}.Pad3), 260},
		}},
	})
}

func TestRDMAUserRxeConstants(t *testing.T) {
	checkConstants(t, []constant{
		{"RXE_NETWORK_TYPE_IPV4", uint64(RXE_NETWORK_TYPE_IPV4), 1},
		{"RXE_NETWORK_TYPE_IPV6", uint64(RXE_NETWORK_TYPE_IPV6), 2},
	})
}

// TestRxeSendWrUnion checks that the members of the union rxe_send_wr.wr
// fit RxeSendWr.Wr, and that the largest fills it, as in C.
func TestRxeSendWrUnion(t *testing.T) {
	checkUnion(t, "struct rxe_send_wr, wr", uintptr(len(RxeSendWr{}.Wr)),
		unsafe.Sizeof(RxeSendWrFlush{}), unsafe.Sizeof(RxeSendWrRDMA{}), unsafe.Sizeof(RxeSendWrAtomic{}),
		unsafe.Sizeof(RxeSendWrUD{}), unsafe.Sizeof(RxeSendWrMW{}))
}

// Layout and constant tests for rdma_user_cm.h and the rdma_cm values of
// include/rdma/rdma_cm.h, include/rdma/ib_cm.h and
// drivers/infiniband/core/cma.c. The expected numbers in the tables were
// printed by the C compiler from the Linux 6.1 headers; do not compute them
// by hand. abi_test.go says how, and why they hold on arm64.
//
// The values of the kernel-internal enums (rdma_cm_event_type of
// include/rdma/rdma_cm.h, ib_cm_data_size of include/rdma/ib_cm.h) and
// sizeof(struct cma_hdr) of drivers/infiniband/core/cma.c were compiled from
// those blocks, copied verbatim from Debian's linux-source-6.1 (6.1.192).

package abi

import (
	"testing"
	"unsafe"
)

func TestRDMAUserCMLayout(t *testing.T) {
	checkLayouts(t, []layout{
		{"struct rdma_ucm_cmd_hdr", unsafe.Sizeof(UcmCmdHdr{}), 8, []offset{
			{"cmd", unsafe.Offsetof(UcmCmdHdr{}.Cmd), 0},
			{"in", unsafe.Offsetof(UcmCmdHdr{}.In), 4},
			{"out", unsafe.Offsetof(UcmCmdHdr{}.Out), 6},
		}},
		{"struct rdma_ucm_create_id", unsafe.Sizeof(UcmCreateID{}), 24, []offset{
			{"uid", unsafe.Offsetof(UcmCreateID{}.UID), 0},
			{"response", unsafe.Offsetof(UcmCreateID{}.Response), 8},
			{"ps", unsafe.Offsetof(UcmCreateID{}.PS), 16},
			{"qp_type", unsafe.Offsetof(UcmCreateID{}.QPType), 18},
			{"reserved", unsafe.Offsetof(UcmCreateID{}.Reserved), 19},
		}},
		{"struct rdma_ucm_create_id_resp", unsafe.Sizeof(UcmCreateIDResp{}), 4, []offset{
			{"id", unsafe.Offsetof(UcmCreateIDResp{}.ID), 0},
		}},
		{"struct rdma_ucm_destroy_id", unsafe.Sizeof(UcmDestroyID{}), 16, []offset{
			{"response", unsafe.Offsetof(UcmDestroyID{}.Response), 0},
			{"id", unsafe.Offsetof(UcmDestroyID{}.ID), 8},
			{"reserved", unsafe.Offsetof(UcmDestroyID{}.Reserved), 12},
		}},
		{"struct rdma_ucm_destroy_id_resp", unsafe.Sizeof(UcmDestroyIDResp{}), 4, []offset{
			{"events_reported", unsafe.Offsetof(UcmDestroyIDResp{}.EventsReported), 0},
		}},
		{"struct rdma_ucm_bind_ip", unsafe.Sizeof(UcmBindIP{}), 40, []offset{
			{"response", unsafe.Offsetof(UcmBindIP{}.Response), 0},
			{"addr", unsafe.Offsetof(UcmBindIP{}.Addr), 8},
			{"id", unsafe.Offsetof(UcmBindIP{}.ID), 36},
		}},
		{"struct rdma_ucm_bind", unsafe.Sizeof(UcmBind{}), 136, []offset{
			{"id", unsafe.Offsetof(UcmBind{}.ID), 0},
			{"addr_size", unsafe.Offsetof(UcmBind{}.AddrSize), 4},
			{"reserved", unsafe.Offsetof(UcmBind{}.Reserved), 6},
			{"addr", unsafe.Offsetof(UcmBind{}.Addr), 8},
		}},
		{"struct rdma_ucm_resolve_ip", unsafe.Sizeof(UcmResolveIP{}), 64, []offset{
			{"src_addr", unsafe.Offsetof(UcmResolveIP{}.SrcAddr), 0},
			{"dst_addr", unsafe.Offsetof(UcmResolveIP{}.DstAddr), 28},
			{"id", unsafe.Offsetof(UcmResolveIP{}.ID), 56},
			{"timeout_ms", unsafe.Offsetof(UcmResolveIP{}.TimeoutMs), 60},
		}},
		{"struct rdma_ucm_resolve_addr", unsafe.Sizeof(UcmResolveAddr{}), 272, []offset{
			{"id", unsafe.Offsetof(UcmResolveAddr{}.ID), 0},
			{"timeout_ms", unsafe.Offsetof(UcmResolveAddr{}.TimeoutMs), 4},
			{"src_size", unsafe.Offsetof(UcmResolveAddr{}.SrcSize), 8},
			{"dst_size", unsafe.Offsetof(UcmResolveAddr{}.DstSize), 10},
			{"reserved", unsafe.Offsetof(UcmResolveAddr{}.Reserved), 12},
			{"src_addr", unsafe.Offsetof(UcmResolveAddr{}.SrcAddr), 16},
			{"dst_addr", unsafe.Offsetof(UcmResolveAddr{}.DstAddr), 144},
		}},
		{"struct rdma_ucm_resolve_route", unsafe.Sizeof(UcmResolveRoute{}), 8, []offset{
			{"id", unsafe.Offsetof(UcmResolveRoute{}.ID), 0},
			{"timeout_ms", unsafe.Offsetof(UcmResolveRoute{}.TimeoutMs), 4},
		}},
		{"struct rdma_ucm_query", unsafe.Sizeof(UcmQuery{}), 16, []offset{
			{"response", unsafe.Offsetof(UcmQuery{}.Response), 0},
			{"id", unsafe.Offsetof(UcmQuery{}.ID), 8},
			{"option", unsafe.Offsetof(UcmQuery{}.Option), 12},
		}},
		{"struct rdma_ucm_query_route_resp", unsafe.Sizeof(UcmQueryRouteResp{}), 208, []offset{
			{"node_guid", unsafe.Offsetof(UcmQueryRouteResp{}.NodeGUID), 0},
			{"ib_route", unsafe.Offsetof(UcmQueryRouteResp{}.IBRoute), 8},
			{"src_addr", unsafe.Offsetof(UcmQueryRouteResp{}.SrcAddr), 136},
			{"dst_addr", unsafe.Offsetof(UcmQueryRouteResp{}.DstAddr), 164},
			{"num_paths", unsafe.Offsetof(UcmQueryRouteResp{}.NumPaths), 192},
			{"port_num", unsafe.Offsetof(UcmQueryRouteResp{}.PortNum), 196},
			{"reserved", unsafe.Offsetof(UcmQueryRouteResp{}.Reserved), 197},
			{"ibdev_index", unsafe.Offsetof(UcmQueryRouteResp{}.IbdevIndex), 200},
			{"reserved1", unsafe.Offsetof(UcmQueryRouteResp{}.Reserved1), 204},
		}},
		{"struct rdma_ucm_query_addr_resp", unsafe.Sizeof(UcmQueryAddrResp{}), 280, []offset{
			{"node_guid", unsafe.Offsetof(UcmQueryAddrResp{}.NodeGUID), 0},
			{"port_num", unsafe.Offsetof(UcmQueryAddrResp{}.PortNum), 8},
			{"reserved", unsafe.Offsetof(UcmQueryAddrResp{}.Reserved), 9},
			{"pkey", unsafe.Offsetof(UcmQueryAddrResp{}.PKey), 10},
			{"src_size", unsafe.Offsetof(UcmQueryAddrResp{}.SrcSize), 12},
			{"dst_size", unsafe.Offsetof(UcmQueryAddrResp{}.DstSize), 14},
			{"src_addr", unsafe.Offsetof(UcmQueryAddrResp{}.SrcAddr), 16},
			{"dst_addr", unsafe.Offsetof(UcmQueryAddrResp{}.DstAddr), 144},
			{"ibdev_index", unsafe.Offsetof(UcmQueryAddrResp{}.IbdevIndex), 272},
			{"reserved1", unsafe.Offsetof(UcmQueryAddrResp{}.Reserved1), 276},
		}},
		{"struct rdma_ucm_query_path_resp", unsafe.Sizeof(UcmQueryPathResp{}), 8, []offset{
			{"num_paths", unsafe.Offsetof(UcmQueryPathResp{}.NumPaths), 0},
			{"reserved", unsafe.Offsetof(UcmQueryPathResp{}.Reserved), 4},
		}},
		{"struct rdma_ucm_conn_param", unsafe.Sizeof(UcmConnParam{}), 272, []offset{
			{"qp_num", unsafe.Offsetof(UcmConnParam{}.QPNum), 0},
			{"qkey", unsafe.Offsetof(UcmConnParam{}.QKey), 4},
			{"private_data", unsafe.Offsetof(UcmConnParam{}.PrivateData), 8},
			{"private_data_len", unsafe.Offsetof(UcmConnParam{}.PrivateDataLen), 264},
			{"srq", unsafe.Offsetof(UcmConnParam{}.SRQ), 265},
			{"responder_resources", unsafe.Offsetof(UcmConnParam{}.ResponderResources), 266},
			{"initiator_depth", unsafe.Offsetof(UcmConnParam{}.InitiatorDepth), 267},
			{"flow_control", unsafe.Offsetof(UcmConnParam{}.FlowControl), 268},
			{"retry_count", unsafe.Offsetof(UcmConnParam{}.RetryCount), 269},
			{"rnr_retry_count", unsafe.Offsetof(UcmConnParam{}.RNRRetryCount), 270},
			{"valid", unsafe.Offsetof(UcmConnParam{}.Valid), 271},
		}},
		{"struct rdma_ucm_ud_param", unsafe.Sizeof(UcmUDParam{}), 304, []offset{
			{"qp_num", unsafe.Offsetof(UcmUDParam{}.QPNum), 0},
			{"qkey", unsafe.Offsetof(UcmUDParam{}.QKey), 4},
			{"ah_attr", unsafe.Offsetof(UcmUDParam{}.AHAttr), 8},
			{"private_data", unsafe.Offsetof(UcmUDParam{}.PrivateData), 40},
			{"private_data_len", unsafe.Offsetof(UcmUDParam{}.PrivateDataLen), 296},
			{"reserved", unsafe.Offsetof(UcmUDParam{}.Reserved), 297},
		}},
		{"struct rdma_ucm_ece", unsafe.Sizeof(UcmECE{}), 8, []offset{
			{"vendor_id", unsafe.Offsetof(UcmECE{}.VendorID), 0},
			{"attr_mod", unsafe.Offsetof(UcmECE{}.AttrMod), 4},
		}},
		{"struct rdma_ucm_connect", unsafe.Sizeof(UcmConnect{}), 288, []offset{
			{"conn_param", unsafe.Offsetof(UcmConnect{}.ConnParam), 0},
			{"id", unsafe.Offsetof(UcmConnect{}.ID), 272},
			{"reserved", unsafe.Offsetof(UcmConnect{}.Reserved), 276},
			{"ece", unsafe.Offsetof(UcmConnect{}.ECE), 280},
		}},
		{"struct rdma_ucm_listen", unsafe.Sizeof(UcmListen{}), 8, []offset{
			{"id", unsafe.Offsetof(UcmListen{}.ID), 0},
			{"backlog", unsafe.Offsetof(UcmListen{}.Backlog), 4},
		}},
		{"struct rdma_ucm_accept", unsafe.Sizeof(UcmAccept{}), 296, []offset{
			{"uid", unsafe.Offsetof(UcmAccept{}.UID), 0},
			{"conn_param", unsafe.Offsetof(UcmAccept{}.ConnParam), 8},
			{"id", unsafe.Offsetof(UcmAccept{}.ID), 280},
			{"reserved", unsafe.Offsetof(UcmAccept{}.Reserved), 284},
			{"ece", unsafe.Offsetof(UcmAccept{}.ECE), 288},
		}},
		{"struct rdma_ucm_reject", unsafe.Sizeof(UcmReject{}), 264, []offset{
			{"id", unsafe.Offsetof(UcmReject{}.ID), 0},
			{"private_data_len", unsafe.Offsetof(UcmReject{}.PrivateDataLen), 4},
			{"reason", unsafe.Offsetof(UcmReject{}.Reason), 5},
			{"reserved", unsafe.Offsetof(UcmReject{}.Reserved), 6},
			{"private_data", unsafe.Offsetof(UcmReject{}.PrivateData), 8},
		}},
		{"struct rdma_ucm_disconnect", unsafe.Sizeof(UcmDisconnect{}), 4, []offset{
			{"id", unsafe.Offsetof(UcmDisconnect{}.ID), 0},
		}},
		{"struct rdma_ucm_init_qp_attr", unsafe.Sizeof(UcmInitQPAttr{}), 16, []offset{
			{"response", unsafe.Offsetof(UcmInitQPAttr{}.Response), 0},
			{"id", unsafe.Offsetof(UcmInitQPAttr{}.ID), 8},
			{"qp_state", unsafe.Offsetof(UcmInitQPAttr{}.QPState), 12},
		}},
		{"struct rdma_ucm_notify", unsafe.Sizeof(UcmNotify{}), 8, []offset{
			{"id", unsafe.Offsetof(UcmNotify{}.ID), 0},
			{"event", unsafe.Offsetof(UcmNotify{}.Event), 4},
		}},
		{"struct rdma_ucm_join_ip_mcast", unsafe.Sizeof(UcmJoinIPMcast{}), 48, []offset{
			{"response", unsafe.Offsetof(UcmJoinIPMcast{}.Response), 0},
			{"uid", unsafe.Offsetof(UcmJoinIPMcast{}.UID), 8},
			{"addr", unsafe.Offsetof(UcmJoinIPMcast{}.Addr), 16},
			{"id", unsafe.Offsetof(UcmJoinIPMcast{}.ID), 44},
		}},
		{"struct rdma_ucm_join_mcast", unsafe.Sizeof(UcmJoinMcast{}), 152, []offset{
			{"response", unsafe.Offsetof(UcmJoinMcast{}.Response), 0},
			{"uid", unsafe.Offsetof(UcmJoinMcast{}.UID), 8},
			{"id", unsafe.Offsetof(UcmJoinMcast{}.ID), 16},
			{"addr_size", unsafe.Offsetof(UcmJoinMcast{}.AddrSize), 20},
			{"join_flags", unsafe.Offsetof(UcmJoinMcast{}.JoinFlags), 22},
			{"addr", unsafe.Offsetof(UcmJoinMcast{}.Addr), 24},
		}},
		{"struct rdma_ucm_get_event", unsafe.Sizeof(UcmGetEvent{}), 8, []offset{
			{"response", unsafe.Offsetof(UcmGetEvent{}.Response), 0},
		}},
		{"struct rdma_ucm_event_resp", unsafe.Sizeof(UcmEventResp{}), 336, []offset{
			{"uid", unsafe.Offsetof(UcmEventResp{}.UID), 0},
			{"id", unsafe.Offsetof(UcmEventResp{}.ID), 8},
			{"event", unsafe.Offsetof(UcmEventResp{}.Event), 12},
			{"status", unsafe.Offsetof(UcmEventResp{}.Status), 16},
			{"param", unsafe.Offsetof(UcmEventResp{}.Param), 20},
			{"param.conn", unsafe.Offsetof(UcmEventResp{}.Param), 20},
			{"param.ud", unsafe.Offsetof(UcmEventResp{}.Param), 20},
			{"reserved", unsafe.Offsetof(UcmEventResp{}.Reserved), 324},
			{"ece", unsafe.Offsetof(UcmEventResp{}.ECE), 328},
		}},
		{"struct rdma_ucm_set_option", unsafe.Sizeof(UcmSetOption{}), 24, []offset{
			{"optval", unsafe.Offsetof(UcmSetOption{}.Optval), 0},
			{"id", unsafe.Offsetof(UcmSetOption{}.ID), 8},
			{"level", unsafe.Offsetof(UcmSetOption{}.Level), 12},
			{"optname", unsafe.Offsetof(UcmSetOption{}.Optname), 16},
			{"optlen", unsafe.Offsetof(UcmSetOption{}.Optlen), 20},
		}},
		{"struct rdma_ucm_migrate_id", unsafe.Sizeof(UcmMigrateID{}), 16, []offset{
			{"response", unsafe.Offsetof(UcmMigrateID{}.Response), 0},
			{"id", unsafe.Offsetof(UcmMigrateID{}.ID), 8},
			{"fd", unsafe.Offsetof(UcmMigrateID{}.FD), 12},
		}},
		{"struct rdma_ucm_migrate_resp", unsafe.Sizeof(UcmMigrateResp{}), 4, []offset{
			{"events_reported", unsafe.Offsetof(UcmMigrateResp{}.EventsReported), 0},
		}},
	})
	checkAligns(t, []align{
		{"struct rdma_ucm_cmd_hdr", unsafe.Alignof(UcmCmdHdr{}), 4},
		{"struct rdma_ucm_create_id", unsafe.Alignof(UcmCreateID{}), 8},
		{"struct rdma_ucm_create_id_resp", unsafe.Alignof(UcmCreateIDResp{}), 4},
		{"struct rdma_ucm_destroy_id", unsafe.Alignof(UcmDestroyID{}), 8},
		{"struct rdma_ucm_destroy_id_resp", unsafe.Alignof(UcmDestroyIDResp{}), 4},
		{"struct rdma_ucm_bind_ip", unsafe.Alignof(UcmBindIP{}), 8},
		{"struct rdma_ucm_bind", unsafe.Alignof(UcmBind{}), 8},
		{"struct rdma_ucm_resolve_ip", unsafe.Alignof(UcmResolveIP{}), 4},
		{"struct rdma_ucm_resolve_addr", unsafe.Alignof(UcmResolveAddr{}), 8},
		{"struct rdma_ucm_resolve_route", unsafe.Alignof(UcmResolveRoute{}), 4},
		{"struct rdma_ucm_query", unsafe.Alignof(UcmQuery{}), 8},
		{"struct rdma_ucm_query_route_resp", unsafe.Alignof(UcmQueryRouteResp{}), 8},
		{"struct rdma_ucm_query_addr_resp", unsafe.Alignof(UcmQueryAddrResp{}), 8},
		{"struct rdma_ucm_query_path_resp", unsafe.Alignof(UcmQueryPathResp{}), 4},
		{"struct rdma_ucm_conn_param", unsafe.Alignof(UcmConnParam{}), 4},
		{"struct rdma_ucm_ud_param", unsafe.Alignof(UcmUDParam{}), 4},
		{"struct rdma_ucm_ece", unsafe.Alignof(UcmECE{}), 4},
		{"struct rdma_ucm_connect", unsafe.Alignof(UcmConnect{}), 4},
		{"struct rdma_ucm_listen", unsafe.Alignof(UcmListen{}), 4},
		{"struct rdma_ucm_accept", unsafe.Alignof(UcmAccept{}), 8},
		{"struct rdma_ucm_reject", unsafe.Alignof(UcmReject{}), 4},
		{"struct rdma_ucm_disconnect", unsafe.Alignof(UcmDisconnect{}), 4},
		{"struct rdma_ucm_init_qp_attr", unsafe.Alignof(UcmInitQPAttr{}), 8},
		{"struct rdma_ucm_notify", unsafe.Alignof(UcmNotify{}), 4},
		{"struct rdma_ucm_join_ip_mcast", unsafe.Alignof(UcmJoinIPMcast{}), 8},
		{"struct rdma_ucm_join_mcast", unsafe.Alignof(UcmJoinMcast{}), 8},
		{"struct rdma_ucm_get_event", unsafe.Alignof(UcmGetEvent{}), 8},
		{"struct rdma_ucm_event_resp", unsafe.Alignof(UcmEventResp{}), 8},
		{"struct rdma_ucm_set_option", unsafe.Alignof(UcmSetOption{}), 8},
		{"struct rdma_ucm_migrate_id", unsafe.Alignof(UcmMigrateID{}), 8},
		{"struct rdma_ucm_migrate_resp", unsafe.Alignof(UcmMigrateResp{}), 4},
	})
}

// TestRDMAUserCMUnions checks the byte arrays that stand for C unions and
// socket addresses.
func TestRDMAUserCMUnions(t *testing.T) {
	// sizeof(((struct rdma_ucm_event_resp *)0)->param) is 304; its members,
	// struct rdma_ucm_conn_param and struct rdma_ucm_ud_param, 272 and 304.
	if n := len(UcmEventResp{}.Param); n != 304 {
		t.Errorf("len(UcmEventResp.Param) = %d, C union param has 304 bytes", n)
	}
	checkUnion(t, "struct rdma_ucm_event_resp, param", uintptr(len(UcmEventResp{}.Param)),
		unsafe.Sizeof(UcmConnParam{}), unsafe.Sizeof(UcmUDParam{}))
	// sizeof(struct sockaddr_in6) is 28, sizeof(struct
	// __kernel_sockaddr_storage) 128.
	for _, a := range []struct {
		name      string
		got, want int
	}{
		{"UcmBindIP.Addr", len(UcmBindIP{}.Addr), 28},
		{"UcmResolveIP.SrcAddr", len(UcmResolveIP{}.SrcAddr), 28},
		{"UcmQueryRouteResp.SrcAddr", len(UcmQueryRouteResp{}.SrcAddr), 28},
		{"UcmJoinIPMcast.Addr", len(UcmJoinIPMcast{}.Addr), 28},
		{"UcmBind.Addr", len(UcmBind{}.Addr), 128},
		{"UcmResolveAddr.SrcAddr", len(UcmResolveAddr{}.SrcAddr), 128},
		{"UcmQueryAddrResp.SrcAddr", len(UcmQueryAddrResp{}.SrcAddr), 128},
		{"UcmJoinMcast.Addr", len(UcmJoinMcast{}.Addr), 128},
	} {
		if a.got != a.want {
			t.Errorf("len(%s) = %d, C has %d", a.name, a.got, a.want)
		}
	}
}

func TestRDMAUserCMConstants(t *testing.T) {
	checkConstants(t, []constant{
		{"RDMA_USER_CM_ABI_VERSION", uint64(RDMA_USER_CM_ABI_VERSION), 4},
		{"RDMA_MAX_PRIVATE_DATA", uint64(RDMA_MAX_PRIVATE_DATA), 256},
		{"RDMA_USER_CM_CMD_CREATE_ID", uint64(RDMA_USER_CM_CMD_CREATE_ID), 0},
		{"RDMA_USER_CM_CMD_DESTROY_ID", uint64(RDMA_USER_CM_CMD_DESTROY_ID), 1},
		{"RDMA_USER_CM_CMD_BIND_IP", uint64(RDMA_USER_CM_CMD_BIND_IP), 2},
		{"RDMA_USER_CM_CMD_RESOLVE_IP", uint64(RDMA_USER_CM_CMD_RESOLVE_IP), 3},
		{"RDMA_USER_CM_CMD_RESOLVE_ROUTE", uint64(RDMA_USER_CM_CMD_RESOLVE_ROUTE), 4},
		{"RDMA_USER_CM_CMD_QUERY_ROUTE", uint64(RDMA_USER_CM_CMD_QUERY_ROUTE), 5},
		{"RDMA_USER_CM_CMD_CONNECT", uint64(RDMA_USER_CM_CMD_CONNECT), 6},
		{"RDMA_USER_CM_CMD_LISTEN", uint64(RDMA_USER_CM_CMD_LISTEN), 7},
		{"RDMA_USER_CM_CMD_ACCEPT", uint64(RDMA_USER_CM_CMD_ACCEPT), 8},
		{"RDMA_USER_CM_CMD_REJECT", uint64(RDMA_USER_CM_CMD_REJECT), 9},
		{"RDMA_USER_CM_CMD_DISCONNECT", uint64(RDMA_USER_CM_CMD_DISCONNECT), 10},
		{"RDMA_USER_CM_CMD_INIT_QP_ATTR", uint64(RDMA_USER_CM_CMD_INIT_QP_ATTR), 11},
		{"RDMA_USER_CM_CMD_GET_EVENT", uint64(RDMA_USER_CM_CMD_GET_EVENT), 12},
		{"RDMA_USER_CM_CMD_GET_OPTION", uint64(RDMA_USER_CM_CMD_GET_OPTION), 13},
		{"RDMA_USER_CM_CMD_SET_OPTION", uint64(RDMA_USER_CM_CMD_SET_OPTION), 14},
		{"RDMA_USER_CM_CMD_NOTIFY", uint64(RDMA_USER_CM_CMD_NOTIFY), 15},
		{"RDMA_USER_CM_CMD_JOIN_IP_MCAST", uint64(RDMA_USER_CM_CMD_JOIN_IP_MCAST), 16},
		{"RDMA_USER_CM_CMD_LEAVE_MCAST", uint64(RDMA_USER_CM_CMD_LEAVE_MCAST), 17},
		{"RDMA_USER_CM_CMD_MIGRATE_ID", uint64(RDMA_USER_CM_CMD_MIGRATE_ID), 18},
		{"RDMA_USER_CM_CMD_QUERY", uint64(RDMA_USER_CM_CMD_QUERY), 19},
		{"RDMA_USER_CM_CMD_BIND", uint64(RDMA_USER_CM_CMD_BIND), 20},
		{"RDMA_USER_CM_CMD_RESOLVE_ADDR", uint64(RDMA_USER_CM_CMD_RESOLVE_ADDR), 21},
		{"RDMA_USER_CM_CMD_JOIN_MCAST", uint64(RDMA_USER_CM_CMD_JOIN_MCAST), 22},
		{"RDMA_PS_IPOIB", uint64(RDMA_PS_IPOIB), 2},
		{"RDMA_PS_IB", uint64(RDMA_PS_IB), 319},
		{"RDMA_PS_TCP", uint64(RDMA_PS_TCP), 262},
		{"RDMA_PS_UDP", uint64(RDMA_PS_UDP), 273},
		{"RDMA_USER_CM_QUERY_ADDR", uint64(RDMA_USER_CM_QUERY_ADDR), 0},
		{"RDMA_USER_CM_QUERY_PATH", uint64(RDMA_USER_CM_QUERY_PATH), 1},
		{"RDMA_USER_CM_QUERY_GID", uint64(RDMA_USER_CM_QUERY_GID), 2},
		{"RDMA_MC_JOIN_FLAG_FULLMEMBER", uint64(RDMA_MC_JOIN_FLAG_FULLMEMBER), 0},
		{"RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER", uint64(RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER), 1},
		{"RDMA_MC_JOIN_FLAG_RESERVED", uint64(RDMA_MC_JOIN_FLAG_RESERVED), 2},
		{"RDMA_OPTION_ID", uint64(RDMA_OPTION_ID), 0},
		{"RDMA_OPTION_IB", uint64(RDMA_OPTION_IB), 1},
		{"RDMA_OPTION_ID_TOS", uint64(RDMA_OPTION_ID_TOS), 0},
		{"RDMA_OPTION_ID_REUSEADDR", uint64(RDMA_OPTION_ID_REUSEADDR), 1},
		{"RDMA_OPTION_ID_AFONLY", uint64(RDMA_OPTION_ID_AFONLY), 2},
		{"RDMA_OPTION_ID_ACK_TIMEOUT", uint64(RDMA_OPTION_ID_ACK_TIMEOUT), 3},
		{"RDMA_OPTION_IB_PATH", uint64(RDMA_OPTION_IB_PATH), 1},
		{"RDMA_CM_EVENT_ADDR_RESOLVED", uint64(RDMA_CM_EVENT_ADDR_RESOLVED), 0},
		{"RDMA_CM_EVENT_ADDR_ERROR", uint64(RDMA_CM_EVENT_ADDR_ERROR), 1},
		{"RDMA_CM_EVENT_ROUTE_RESOLVED", uint64(RDMA_CM_EVENT_ROUTE_RESOLVED), 2},
		{"RDMA_CM_EVENT_ROUTE_ERROR", uint64(RDMA_CM_EVENT_ROUTE_ERROR), 3},
		{"RDMA_CM_EVENT_CONNECT_REQUEST", uint64(RDMA_CM_EVENT_CONNECT_REQUEST), 4},
		{"RDMA_CM_EVENT_CONNECT_RESPONSE", uint64(RDMA_CM_EVENT_CONNECT_RESPONSE), 5},
		{"RDMA_CM_EVENT_CONNECT_ERROR", uint64(RDMA_CM_EVENT_CONNECT_ERROR), 6},
		{"RDMA_CM_EVENT_UNREACHABLE", uint64(RDMA_CM_EVENT_UNREACHABLE), 7},
		{"RDMA_CM_EVENT_REJECTED", uint64(RDMA_CM_EVENT_REJECTED), 8},
		{"RDMA_CM_EVENT_ESTABLISHED", uint64(RDMA_CM_EVENT_ESTABLISHED), 9},
		{"RDMA_CM_EVENT_DISCONNECTED", uint64(RDMA_CM_EVENT_DISCONNECTED), 10},
		{"RDMA_CM_EVENT_DEVICE_REMOVAL", uint64(RDMA_CM_EVENT_DEVICE_REMOVAL), 11},
		{"RDMA_CM_EVENT_MULTICAST_JOIN", uint64(RDMA_CM_EVENT_MULTICAST_JOIN), 12},
		{"RDMA_CM_EVENT_MULTICAST_ERROR", uint64(RDMA_CM_EVENT_MULTICAST_ERROR), 13},
		{"RDMA_CM_EVENT_ADDR_CHANGE", uint64(RDMA_CM_EVENT_ADDR_CHANGE), 14},
		{"RDMA_CM_EVENT_TIMEWAIT_EXIT", uint64(RDMA_CM_EVENT_TIMEWAIT_EXIT), 15},
		{"IB_CM_REQ_PRIVATE_DATA_SIZE", uint64(IB_CM_REQ_PRIVATE_DATA_SIZE), 92},
		{"IB_CM_REP_PRIVATE_DATA_SIZE", uint64(IB_CM_REP_PRIVATE_DATA_SIZE), 196},
		{"IB_CM_REJ_PRIVATE_DATA_SIZE", uint64(IB_CM_REJ_PRIVATE_DATA_SIZE), 148},
		{"IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE", uint64(IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE), 216},
		{"IB_CM_SIDR_REP_PRIVATE_DATA_SIZE", uint64(IB_CM_SIDR_REP_PRIVATE_DATA_SIZE), 136},
		{"CMA_HDR_SIZE", uint64(CMA_HDR_SIZE), 36},
		{"CMA_MAX_PRIVATE_DATA_REQ", uint64(CMA_MAX_PRIVATE_DATA_REQ), 56},
		{"CMA_MAX_PRIVATE_DATA_REP", uint64(CMA_MAX_PRIVATE_DATA_REP), 196},
		{"CMA_MAX_PRIVATE_DATA_REJ", uint64(CMA_MAX_PRIVATE_DATA_REJ), 148},
		{"CMA_MAX_PRIVATE_DATA_SIDR_REQ", uint64(CMA_MAX_PRIVATE_DATA_SIDR_REQ), 180},
		{"CMA_MAX_PRIVATE_DATA_SIDR_REP", uint64(CMA_MAX_PRIVATE_DATA_SIDR_REP), 136},
	})
}

// align is the alignment of a struct of the ABI: its C name, Go alignment
// and C alignment (_Alignof). It matters where a struct is embedded, and
// for the sockaddr storage, which C aligns to 8.
type align struct {
	c         string
	got, want uintptr
}

func checkAligns(t *testing.T, aligns []align) {
	t.Helper()
	for _, a := range aligns {
		if a.got != a.want {
			t.Errorf("_Alignof(%s): Go %d, C %d", a.c, a.got, a.want)
		}
	}
}

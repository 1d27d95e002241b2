// Structs and constants from include/uapi/rdma/ib_user_sa.h (Linux 6.1;
// identical to rdma-core v44's kernel-headers/rdma/ib_user_sa.h): the path
// records that the rdma_cm returns in UcmQueryRouteResp and after
// UcmQueryPathResp (rdma_user_cm.go).
//
// Struct names are the C names in CamelCase; constant names are the C
// names. The sizes and offsets are checked against the C compiler in
// ib_user_sa_test.go.

package abi

// IBPathRecData.Flags: what a path record is for.
const (
	IB_PATH_GMP             = 1
	IB_PATH_PRIMARY         = 1 << 1
	IB_PATH_ALTERNATE       = 1 << 2
	IB_PATH_OUTBOUND        = 1 << 3
	IB_PATH_INBOUND         = 1 << 4
	IB_PATH_INBOUND_REVERSE = 1 << 5
	IB_PATH_BIDIRECTIONAL   = IB_PATH_OUTBOUND | IB_PATH_INBOUND_REVERSE
)

// IBPathRecData is a path record in the wire format of the subnet
// administrator (the 64-byte PathRecord attribute, big-endian), as
// RDMA_USER_CM_QUERY_PATH returns it after UcmQueryPathResp and as
// RDMA_OPTION_IB_PATH takes it.
//
// struct ib_path_rec_data
type IBPathRecData struct {
	Flags    uint32 // IB_PATH_*
	Reserved uint32
	PathRec  [16]uint32 // the SA PathRecord, in network order
}

// IBUserPathRec is a path record in the unpacked form of
// RDMA_USER_CM_CMD_QUERY_ROUTE (UcmQueryRouteResp.IBRoute).
//
// struct ib_user_path_rec
type IBUserPathRec struct {
	DGID                   [16]uint8
	SGID                   [16]uint8
	DLID                   uint16 // __be16
	SLID                   uint16 // __be16
	RawTraffic             uint32
	FlowLabel              uint32 // __be32
	Reversible             uint32
	MTU                    uint32 // IB_MTU_*
	PKey                   uint16 // __be16
	HopLimit               uint8
	TrafficClass           uint8
	NumbPath               uint8
	SL                     uint8
	MTUSelector            uint8
	RateSelector           uint8
	Rate                   uint8
	PacketLifeTimeSelector uint8
	PacketLifeTime         uint8
	Preference             uint8
}

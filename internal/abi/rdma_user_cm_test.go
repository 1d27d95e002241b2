package abi

import (
	"testing"
	"unsafe"
)

// TestRDMAUserCMUnions checks that the members of the union
// rdma_ucm_event_resp.param fit the byte array that stands for it, and that
// the largest fills it, as in C. The sizes of that array and of the socket
// address arrays are in the generated TestRDMAUserCMConstants.
func TestRDMAUserCMUnions(t *testing.T) {
	checkUnion(t, "struct rdma_ucm_event_resp, param", uintptr(len(UcmEventResp{}.Param)),
		unsafe.Sizeof(UcmConnParam{}), unsafe.Sizeof(UcmUDParam{}))
}

package abi

import (
	"testing"
	"unsafe"
)

// TestRxeSendWrUnion checks that the members of the union rxe_send_wr.wr
// fit RxeSendWr.Wr, and that the largest fills it, as in C.
func TestRxeSendWrUnion(t *testing.T) {
	checkUnion(t, "struct rxe_send_wr, wr", uintptr(len(RxeSendWr{}.Wr)),
		unsafe.Sizeof(RxeSendWrFlush{}), unsafe.Sizeof(RxeSendWrRDMA{}), unsafe.Sizeof(RxeSendWrAtomic{}),
		unsafe.Sizeof(RxeSendWrUD{}), unsafe.Sizeof(RxeSendWrMW{}))
}

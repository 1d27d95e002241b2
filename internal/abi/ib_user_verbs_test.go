package abi

import (
	"testing"
	"unsafe"
)

// TestSendWrUnion checks that the members of the union ib_uverbs_send_wr.wr
// fit SendWr.Wr, and that the largest fills it, as in C.
func TestSendWrUnion(t *testing.T) {
	checkUnion(t, "struct ib_uverbs_send_wr, wr", uintptr(len(SendWr{}.Wr)),
		unsafe.Sizeof(SendWrRDMA{}), unsafe.Sizeof(SendWrAtomic{}), unsafe.Sizeof(SendWrUD{}))
}

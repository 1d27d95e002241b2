package uverbs

import (
	"unsafe"

	"github.com/purerdma/purerdma/internal/provider"
)

// sendView is wr as the drivers' request: SendWR and provider.SendWR
// have one layout (TestSendWRLayout), so a driver of this module reads the
// caller's request with no copy between them. recvViews is the same for
// a slice of receives. This file is the data path's only unsafe code in
// uverbs.
func sendView(wr *SendWR) *provider.SendWR { return (*provider.SendWR)(unsafe.Pointer(wr)) }

// recvViews reinterprets the slice header itself: unsafe.Slice would
// check the length and the pointer again, and RecvWR and provider.RecvWR
// have one size (TestRecvWRLayout).
func recvViews(wrs []RecvWR) []provider.RecvWR {
	return *(*[]provider.RecvWR)(unsafe.Pointer(&wrs))
}

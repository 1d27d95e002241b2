package uverbs

import (
	"unsafe"

	"github.com/purerdma/purerdma/internal/provider"
)

// sendView is wr as the drivers' request: SendWR and provider.SendWR
// have one layout (TestSendWRLayout), so a driver of this module reads the
// caller's request with no copy between them. sendViews and recvViews are
// the same for slices of requests. This file is the data path's only
// unsafe code in uverbs.
func sendView(wr *SendWR) *provider.SendWR { return (*provider.SendWR)(unsafe.Pointer(wr)) }

// sendViews and recvViews reinterpret the slice header itself:
// unsafe.Slice would check the length and the pointer again, and the
// public and the drivers' types have one size (TestSendWRLayout,
// TestRecvWRLayout).
func sendViews(wrs []SendWR) []provider.SendWR { return *(*[]provider.SendWR)(unsafe.Pointer(&wrs)) }

func recvViews(wrs []RecvWR) []provider.RecvWR {
	return *(*[]provider.RecvWR)(unsafe.Pointer(&wrs))
}

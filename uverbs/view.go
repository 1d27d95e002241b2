package uverbs

import (
	"unsafe"

	"github.com/purerdma/purerdma/internal/provider"
)

// sendView is wr as the drivers' request: SendWR and provider.SendWR
// have one layout (TestSendWRLayout), so a driver of this module reads the
// caller's request with no copy between them. recvView is the same for
// receives. This file is the data path's only unsafe code in uverbs.
func sendView(wr *SendWR) *provider.SendWR { return (*provider.SendWR)(unsafe.Pointer(wr)) }

func recvView(wr *RecvWR) *provider.RecvWR { return (*provider.RecvWR)(unsafe.Pointer(wr)) }

// recvViews is recvView for a slice of requests.
func recvViews(wrs []RecvWR) []provider.RecvWR {
	return *(*[]provider.RecvWR)(unsafe.Pointer(&wrs))
}

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

// sendViews is wrs as the drivers' requests, for their batch puts.
func sendViews(wrs []SendWR) []provider.SendWR { return *(*[]provider.SendWR)(unsafe.Pointer(&wrs)) }

func recvView(wr *RecvWR) *provider.RecvWR { return (*provider.RecvWR)(unsafe.Pointer(wr)) }

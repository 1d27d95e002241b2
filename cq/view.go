package cq

import (
	"unsafe"

	"github.com/purerdma/purerdma/internal/provider"
)

// driverWCs is wc as the drivers' completions: WC and provider.WC have
// one layout, field for field (TestWCLayout), so a driver's Poll writes
// into the caller's slice with no copy between them. This is package cq's
// only unsafe code.
func driverWCs(wc []WC) []provider.WC {
	return unsafe.Slice((*provider.WC)(unsafe.Pointer(unsafe.SliceData(wc))), len(wc))
}

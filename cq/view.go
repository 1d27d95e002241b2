package cq

import (
	"unsafe"

	"github.com/purerdma/purerdma/internal/provider"
)

// driverWCs is wc as the drivers' completions: WC and provider.WC have
// one layout, field for field (TestWCLayout), so a driver's Poll writes
// into the caller's slice with no copy between them. This is package cq's
// only unsafe code. The slice header is reinterpreted, not rebuilt:
// unsafe.Slice would check the length's product for overflow on every
// poll (eight instructions), which a valid slice cannot have.
func driverWCs(wc []WC) []provider.WC {
	return *(*[]provider.WC)(unsafe.Pointer(&wc))
}
